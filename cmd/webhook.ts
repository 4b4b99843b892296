// `npm run webhook`: the conversion webhook as a standalone process, for local use and
// for clusters that run it apart from the operator. Its metrics are on --metrics-port
// (plain HTTP, loopback by default), never on the webhook port. Exits 2 on a bad flag, 1
// when it cannot start (e.g. no certificate), 0 after a graceful SIGTERM/SIGINT.

import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { createLogger, parseLogLevel } from '../lib/log.ts';
import { DEFAULT_BODY_TIMEOUT_BASE_MS } from '../conversion-webhook/capacity.ts';
import { serveMetrics } from '../conversion-webhook/metrics-server.ts';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_REVIEWS,
  startWebhookServer,
} from '../conversion-webhook/server.ts';
import {
  defaultStashKeyFile,
  loadOrCreateStashKey,
  STASH_KEY_FILE,
} from '../conversion-webhook/stash-key.ts';
import { certPathsIn, DEFAULT_CERT_DIR } from '../lib/tls/serving.ts';

function int(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

const program = new Command('aiops-webhook')
  .description('HTTPS conversion webhook for aitasks.aiops.example.com (v1alpha1 ↔ v1 ↔ v2)')
  .option('--port <port>', 'TCP port to listen on', int('--port', 0), 9443)
  .option('--bind-address <addr>', 'address to bind', '0.0.0.0')
  .option('--cert-dir <dir>', 'directory holding tls.crt and tls.key', DEFAULT_CERT_DIR)
  .option(
    '--max-body-bytes <n>',
    `largest accepted request body in bytes (${DEFAULT_MAX_BODY_BYTES / 1024 / 1024} MiB, the default of the webhook the operator hosts too); a larger one gets HTTP 413`,
    int('--max-body-bytes', 1024),
    DEFAULT_MAX_BODY_BYTES,
  )
  .option(
    '--max-concurrent-reviews <n>',
    "most ConversionReviews read or converted at once, a count ≥ 1 (the default of the operator's --webhook-max-concurrent-reviews too); one more gets HTTP 429 with Retry-After: 1 s, which the apiserver retries",
    int('--max-concurrent-reviews', 1),
    DEFAULT_MAX_CONCURRENT_REVIEWS,
  )
  .option(
    '--request-timeout <ms>',
    'fixed part of each request body deadline in milliseconds: a body of n bytes must arrive within this plus n at 1 MiB/s, else HTTP 408 (headers: within 5 s)',
    int('--request-timeout', 100),
    DEFAULT_BODY_TIMEOUT_BASE_MS,
  )
  .option(
    '--metrics-port <port>',
    'serve /metrics (plain HTTP) on this port; 0 picks a free one (default: off; the webhook port serves no metrics)',
    int('--metrics-port', 0),
  )
  .option('--metrics-bind-address <addr>', 'address /metrics binds', '127.0.0.1')
  .option(
    '--stash-key-file <file>',
    `file with the key (32+ raw bytes) that signs the conversion stash; created with 32 random bytes, mode 0600, when absent; keep it across restarts (default: ${STASH_KEY_FILE} in --cert-dir)`,
  )
  .option('--log-level <level>', 'debug, info, warn or error', 'info')
  .showHelpAfterError()
  .exitOverride();

try {
  program.parse();
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  throw err;
}

const opts = program.opts<{
  port: number;
  bindAddress: string;
  certDir: string;
  stashKeyFile?: string;
  maxBodyBytes: number;
  maxConcurrentReviews: number;
  requestTimeout: number;
  metricsPort?: number;
  metricsBindAddress: string;
  logLevel: string;
}>();
let level;
try {
  level = parseLogLevel(opts.logLevel);
} catch (err) {
  process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(2);
}
const log = createLogger('conversion-webhook', { level });
try {
  const server = await startWebhookServer({
    port: opts.port,
    host: opts.bindAddress,
    cert: certPathsIn(opts.certDir),
    stashKey: loadOrCreateStashKey(opts.stashKeyFile ?? defaultStashKeyFile(opts.certDir)),
    maxBodyBytes: opts.maxBodyBytes,
    maxConcurrentReviews: opts.maxConcurrentReviews,
    requestTimeoutMs: opts.requestTimeout,
    logger: log,
  });
  const metrics =
    opts.metricsPort === undefined
      ? undefined
      : await serveMetrics(server.metrics.registry, opts.metricsBindAddress, opts.metricsPort);
  if (metrics !== undefined)
    log.info('serving /metrics', { port: metrics.port, host: opts.metricsBindAddress });
  const stop = (signal: string) => {
    log.info('shutting down', { signal });
    void Promise.all([server.close(), metrics?.close()]).then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (err) {
  log.error('cannot start the conversion webhook', { err });
  process.exit(1);
}
