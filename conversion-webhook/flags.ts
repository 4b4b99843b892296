// The standalone webhook's flags (`npm run webhook`, cmd/webhook.ts), each with its parser,
// default and help (lib/options-table.ts): its limits default to the constants the webhook
// the operator hosts uses, and a value out of range is a usage error saying which flag.

import { flag, integer, text } from '../lib/options-table.ts';
import { DEFAULT_CERT_DIR } from '../lib/tls/serving.ts';
import { DEFAULT_BODY_TIMEOUT_BASE_MS } from './capacity.ts';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT_REVIEWS } from './server.ts';
import { STASH_KEY_FILE } from './stash-key.ts';

/** An integer ≥ `min`, refused as "<name> must be an integer ≥ <min>". */
function atLeast(name: string, min: number): (value: string) => number {
  return integer(min, Number.MAX_SAFE_INTEGER, () => `${name} must be an integer ≥ ${min}`);
}

/** Every flag of the standalone webhook, in --help order. */
export const WEBHOOK_FLAGS = {
  port: flag({
    flags: '--port <port>',
    help: 'TCP port to listen on',
    parse: atLeast('--port', 0),
    default: 9443,
  }),
  bindAddress: flag({
    flags: '--bind-address <addr>',
    help: 'address to bind',
    parse: text,
    default: '0.0.0.0',
  }),
  certDir: flag({
    flags: '--cert-dir <dir>',
    help: 'directory holding tls.crt and tls.key',
    parse: text,
    default: DEFAULT_CERT_DIR,
  }),
  maxBodyBytes: flag({
    flags: '--max-body-bytes <n>',
    help: `largest accepted request body in bytes (${DEFAULT_MAX_BODY_BYTES / 1024 / 1024} MiB, the default of the webhook the operator hosts too); a larger one gets HTTP 413`,
    parse: atLeast('--max-body-bytes', 1024),
    default: DEFAULT_MAX_BODY_BYTES,
  }),
  maxConcurrentReviews: flag({
    flags: '--max-concurrent-reviews <n>',
    help: "most ConversionReviews read or converted at once, a count ≥ 1 (the default of the operator's --webhook-max-concurrent-reviews too); one more gets HTTP 429 with Retry-After: 1 s, which the apiserver retries",
    parse: atLeast('--max-concurrent-reviews', 1),
    default: DEFAULT_MAX_CONCURRENT_REVIEWS,
  }),
  requestTimeout: flag({
    flags: '--request-timeout <ms>',
    help: 'fixed part of each request body deadline in milliseconds: a body of n bytes must arrive within this plus n at 1 MiB/s, else HTTP 408 (headers: within 5 s)',
    parse: atLeast('--request-timeout', 100),
    default: DEFAULT_BODY_TIMEOUT_BASE_MS,
  }),
  metricsPort: flag({
    flags: '--metrics-port <port>',
    help: 'serve /metrics (plain HTTP) on this port; 0 picks a free one (default: off; the webhook port serves no metrics)',
    parse: atLeast('--metrics-port', 0),
  }),
  metricsBindAddress: flag({
    flags: '--metrics-bind-address <addr>',
    help: 'address /metrics binds',
    parse: text,
    default: '127.0.0.1',
  }),
  stashKeyFile: flag({
    flags: '--stash-key-file <file>',
    help: `file with the key (32+ raw bytes) that signs the conversion stash; created with 32 random bytes, mode 0600, when absent; keep it across restarts (default: ${STASH_KEY_FILE} in --cert-dir)`,
    parse: text,
  }),
  logLevel: flag({
    flags: '--log-level <level>',
    help: 'debug, info, warn or error',
    parse: text,
    default: 'info',
  }),
} as const;
