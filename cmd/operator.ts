// The operator process as deployed (`npm run operator`, dist/operator.mjs, the image):
// the operator from operator/ plus, when `--webhook-port` is set, the conversion
// webhook from conversion-webhook/ in the same process (what OLM's webhookdefinitions
// and the plain manifests expect), and with `--self-signed-cert` the certificate that
// webhook serves. It is the one place those rooms meet; neither imports the other.

import { hostname } from 'node:os';
import { CommanderError, InvalidArgumentError } from 'commander';
import { KubeTransport } from '../api/kube/transport.ts';
import { CRD_NAME } from '../api/schema/common.ts';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { buildCommand, switchOption } from '../operator/command.ts';
import { startOperator, type OperatorOptions } from '../operator/assembly.ts';
import { startWebhookServer, type WebhookServer } from '../conversion-webhook/server.ts';
import { certPathsIn, DEFAULT_CERT_DIR } from '../conversion-webhook/tls.ts';
import { syncServingCert } from '../conversion-webhook/cert-rotation.ts';
import { migrateStorage, MigrationRefused } from '../api/upgrade/migrate.ts';

interface WebhookFlags {
  webhookPort?: number;
  webhookCertDir: string;
  selfSignedCert?: boolean;
  webhookSecret: string;
  webhookService: string;
  certSyncInterval: number;
  migrateStorageOnStart?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(`expected a port from 0 to 65535, got "${value}"`);
  return n;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 10)
    throw new InvalidArgumentError(`expected whole seconds ≥ 10, got "${value}"`);
  return n;
}

const command = buildCommand(run)
  .option(
    '--webhook-port <port>',
    'serve the conversion webhook on this port (OLM and the manifests use 9443; default: off)',
    port,
  )
  .option(
    '--webhook-cert-dir <dir>',
    'directory with the webhook tls.crt and tls.key (reloaded on change)',
    DEFAULT_CERT_DIR,
  )
  .addOption(
    switchOption(
      '--self-signed-cert',
      'issue and renew the webhook certificate in a Secret and patch the CRD caBundle (plain install without OLM)',
    ),
  )
  .option(
    '--webhook-secret <name>',
    'Secret holding the self-signed CA and certificate',
    DEFAULT_INSTALL.webhookCertSecret,
  )
  .option(
    '--webhook-service <name>',
    'Service in front of the webhook (names the certificate covers)',
    DEFAULT_INSTALL.webhookService,
  )
  .option(
    '--cert-sync-interval <seconds>',
    'how often --self-signed-cert re-checks the certificate',
    seconds,
    3600,
  )
  .addOption(
    switchOption(
      '--migrate-storage-on-start',
      'before reconciling, rewrite every AITask at the storage version and trim the CRD storedVersions (as kubectl aiops migrate-storage)',
    ),
  )
  .showHelpAfterError('(run with --help for every flag)')
  .exitOverride();

let sharedTransport: Promise<KubeTransport> | undefined;

/** The process' one transport for the hosted webhook's certificate and the startup migration. */
function transportOf(o: OperatorOptions): Promise<KubeTransport> {
  sharedTransport ??= KubeTransport.create({
    ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context ? { context: o.context } : {}),
  });
  return sharedTransport;
}

async function run(o: OperatorOptions): Promise<void> {
  const flags = command.opts<WebhookFlags>();
  let webhook: WebhookServer | undefined;
  let certTimer: NodeJS.Timeout | undefined;
  if (flags.webhookPort !== undefined) {
    const log = o.log.with({ component: 'conversion-webhook' });
    if (flags.selfSignedCert === true) {
      const transport = await transportOf(o);
      const ns = process.env['POD_NAMESPACE'] ?? o.leaderElectionNamespace;
      const svc = flags.webhookService;
      const sync = () =>
        syncServingCert({
          transport,
          namespace: ns,
          secretName: flags.webhookSecret,
          dnsNames: [`${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`, svc],
          certDir: flags.webhookCertDir,
          crdName: CRD_NAME,
          log,
        });
      await sync();
      certTimer = setInterval(() => {
        sync().catch((err: unknown) =>
          log.error('webhook certificate sync failed; retrying at the next interval', {
            err: (err as Error).message,
          }),
        );
      }, flags.certSyncInterval * 1000);
      certTimer.unref();
    }
    webhook = await startWebhookServer({
      port: flags.webhookPort,
      host: o.bindAddress,
      cert: certPathsIn(flags.webhookCertDir),
      logger: log,
    });
  }
  if (flags.migrateStorageOnStart === true) await migrateOnStart(o);
  const op = await startOperator(o);
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      clearInterval(certTimer);
      await Promise.all([op.stop(), webhook?.close()]);
    }
    process.exit(code);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      o.log.info('signal received', { signal: sig, host: hostname() });
      void stop(0);
    });
  }
  await stop(await op.finished);
}

command.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`operator: ${(err as Error).message}\n`);
  process.exit(1);
});

/**
 * The opt-in startup migration. Idempotent and safe on every replica at once; a refusal
 * (conversion webhook not reachable yet) or an error is logged and the operator starts
 * anyway, since migrating is maintenance, not a precondition of reconciling.
 */
async function migrateOnStart(o: OperatorOptions): Promise<void> {
  const log = o.log.with({ component: 'storage-migration' });
  try {
    const r = await migrateStorage(await transportOf(o), {
      onProgress: (p) => log.info('storage migration progress', { ...p }),
    });
    log.info('storage migration done', {
      seen: r.seen,
      rewritten: r.rewritten,
      storedVersions: r.storedVersionsAfter,
    });
  } catch (err) {
    log[err instanceof MigrationRefused ? 'warn' : 'error'](
      'storage migration not done; the operator starts anyway',
      { err: (err as Error).message },
    );
  }
}
