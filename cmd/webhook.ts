// `npm run webhook`: the conversion webhook as a standalone process, for local use and
// for clusters that run it apart from the operator: parses its flags
// (conversion-webhook/flags.ts), starts the server and, with --metrics-port, its metrics on
// a port of their own (plain HTTP, loopback by default), never on the webhook port. Exits 2
// on a bad flag, 1 when it cannot start (e.g. no certificate), 0 after a graceful
// SIGTERM/SIGINT.

import { Command, CommanderError } from 'commander';
import { createLogger, parseLogLevel } from '../lib/log.ts';
import { optionsTable } from '../lib/options-table.ts';
import { certPathsIn } from '../lib/tls/serving.ts';
import { WEBHOOK_FLAGS } from '../conversion-webhook/flags.ts';
import { serveMetrics } from '../conversion-webhook/metrics-server.ts';
import { startWebhookServer } from '../conversion-webhook/server.ts';
import { defaultStashKeyFile, loadOrCreateStashKey } from '../conversion-webhook/stash-key.ts';

const table = optionsTable(WEBHOOK_FLAGS);
const program = table
  .addTo(new Command('aiops-webhook'))
  .description('HTTPS conversion webhook for aitasks.aiops.example.com (v1alpha1 ↔ v1 ↔ v2)')
  .showHelpAfterError()
  .exitOverride();

try {
  program.parse();
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  throw err;
}

const opts = table.values(program);
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
