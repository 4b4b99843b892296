// The operator process as deployed (`npm run operator`, dist/operator/main.mjs, the image):
// the operator from operator/ plus, when `--webhook-port` is set, the conversion
// webhook from conversion-webhook/ in the same process (what OLM's webhookdefinitions
// and the plain manifests expect), with the key that signs its conversion stash from a
// Secret (conversion-webhook/hosted/conversion-key.ts), and with `--self-signed-cert` the certificate that
// webhook serves. It is the one place those rooms meet; neither imports the other.

import { hostname } from 'node:os';
import { CommanderError, InvalidArgumentError } from 'commander';
import { KubeTransport } from '../lib/kube/transport.ts';
import { CRD_NAME } from '../api/schema/common.ts';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { buildCommand, switchOption } from '../operator/command.ts';
import { startOperator, type OperatorOptions } from '../operator/assembly.ts';
import {
  DEFAULT_MAX_CONCURRENT_REVIEWS,
  startWebhookServer,
  type WebhookServer,
} from '../conversion-webhook/server.ts';
import { certPathsIn, DEFAULT_CERT_DIR } from '../lib/tls/serving.ts';
import { createMetrics, type WebhookMetrics } from '../conversion-webhook/metrics.ts';
import { migrateStorage, MigrationRefused } from '../api/upgrade/migrate.ts';
import { ForbiddenError, InvalidError, UnauthorizedError } from '../lib/kube/errors.ts';
import { operatorConditionRef, reportOperatorCondition } from '../operator/olm/operator-condition-writer.ts';
import { followCertSecret } from '../conversion-webhook/hosted/webhook-cert-secret.ts';
import { firstConversionKey, provideConversionKey } from '../conversion-webhook/hosted/conversion-key.ts';
import { conversionCABundleKeeper } from '../conversion-webhook/hosted/conversion-ca-bundle.ts';
import { checkCABundleOnRejection } from '../conversion-webhook/hosted/conversion-ca-check.ts';
import { serviceOfCertSecret } from '../conversion-webhook/hosted/ca-bundle.ts';
import { metricsServingCert } from '../operator/runtime/metrics-cert.ts';

interface WebhookFlags {
  webhookPort?: number;
  webhookCertDir: string;
  selfSignedCert?: boolean;
  webhookSecret: string;
  webhookService: string;
  certSyncInterval: number;
  webhookShutdownDelay: number;
  webhookMaxConcurrentReviews: number;
  webhookCertFromSecret?: string;
  conversionKeySecret: string;
  migrateStorageOnStart?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(`expected a port from 0 to 65535, got "${value}"`);
  return n;
}

function delaySeconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 300)
    throw new InvalidArgumentError(`expected whole seconds from 0 to 300, got "${value}"`);
  return n;
}

function positiveCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected a whole number ≥ 1, got "${value}"`);
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
  .option(
    '--webhook-shutdown-delay <seconds>',
    "after SIGTERM, keep answering conversions this long while the pod leaves the Service's endpoints (the leader steps down and /readyz fails at once); SIGINT or a second signal stops at once",
    delaySeconds,
    5,
  )
  .option(
    '--webhook-max-concurrent-reviews <n>',
    "most ConversionReviews the hosted webhook reads or converts at once, a count ≥ 1 (the default of `npm run webhook`'s --max-concurrent-reviews too); one more gets HTTP 429 with Retry-After: 1 s, which the apiserver retries",
    positiveCount,
    DEFAULT_MAX_CONCURRENT_REVIEWS,
  )
  .option(
    '--webhook-cert-from-secret <name>',
    "also read the webhook's tls.crt/tls.key from this Secret in the pod's namespace every 5 s, ahead of the kubelet's volume refresh, and put its CA (olmCAKey) back into the CRD's conversion webhook when an OLM InstallPlan left it without one while it points at the Secret's Service, <service>-cert (the CSV names OLM's <deployment>-service-cert; default: files only)",
  )
  .option(
    '--conversion-key-secret <name>',
    "Secret in the pod's namespace holding the key that signs the conversion stash (data key `conversion-key`; by default the self-signed certificate's Secret, whose name every release's RBAC grants get and update on); the key is added when absent and kept across upgrades and certificate renewals. While it cannot be read (retried every 10 s) the webhook has no key: a review that must write or verify a conversion stash gets a Failure saying why (counted in aiops_conversion_failures_total{reason=\"stash_key_unavailable\"}), every other review converts",
    DEFAULT_INSTALL.conversionKeySecret,
  )
  .addOption(
    switchOption(
      '--migrate-storage-on-start',
      'once started, rewrite every AITask at the storage version and trim the CRD storedVersions (as kubectl aiops migrate-storage); retried with backoff while the conversion webhook is unreachable; exits 1 when Forbidden, Unauthorized or Invalid',
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
  // The hosted webhook (with --webhook-port) and its series, served on the operator's /metrics (behind TokenReview and
  // SubjectAccessReview when secure); the webhook port serves none. The process series are
  // the operator's own.
  const hostedWebhook =
    flags.webhookPort === undefined ? undefined : { port: flags.webhookPort, metrics: createMetrics(false) };
  let certTimer: NodeJS.Timeout | undefined;
  let stopFollowing = (): void => undefined;
  let stopKeyRetries = (): void => undefined;
  let stopCAChecks = (): void => undefined;
  /** Starts the hosted webhook: its stash key, its certificate with --self-signed-cert, its server. */
  const host = async (port: number, metrics: WebhookMetrics): Promise<void> => {
    const log = o.log.with({ component: 'conversion-webhook' });
    const keySecret = {
      transport: await transportOf(o),
      namespace: process.env['POD_NAMESPACE'] ?? o.leaderElectionNamespace,
      name: flags.conversionKeySecret,
    };
    const stashKey = await firstConversionKey({ ...keySecret, log });
    if (flags.selfSignedCert === true) {
      // Loaded only here: the X.509 and ASN.1 libraries it brings cost every other install
      // (OLM's, a cert-manager one) start-up time and idle memory (npm run bench -- peer).
      const { syncServingCert } = await import('../conversion-webhook/cert-rotation.ts');
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
      port,
      host: o.bindAddress,
      cert: certPathsIn(flags.webhookCertDir),
      logger: log,
      metrics,
      stashKey,
      maxConcurrentReviews: flags.webhookMaxConcurrentReviews,
    });
    const server = webhook;
    if (!(stashKey instanceof Uint8Array))
      stopKeyRetries = provideConversionKey({ ...keySecret, server, log });
    stopCAChecks = checkCABundleOnRejection({
      transport: await transportOf(o),
      crdName: CRD_NAME,
      server,
      metrics,
      log,
    });
    if (flags.webhookCertFromSecret !== undefined) {
      const transport = await transportOf(o);
      const namespace = process.env['POD_NAMESPACE'] ?? o.leaderElectionNamespace;
      const service = serviceOfCertSecret(namespace, flags.webhookCertFromSecret);
      stopFollowing = followCertSecret({
        transport,
        namespace,
        name: flags.webhookCertFromSecret,
        server,
        log,
        ...(service
          ? { onCA: conversionCABundleKeeper({ transport, crdName: CRD_NAME, service, log }) }
          : {}),
      });
    }
  };
  // The webhook starts beside the operator rather than before it: each waits on the apiserver
  // (the stash key's GET; the operator's LISTs and Lease) while the other runs. /readyz waits
  // for both, so the Service sends no conversion here before the webhook serves. A webhook
  // that cannot start stops the process with its error, as before the operator started.
  let hosted = hostedWebhook === undefined;
  const hosting =
    hostedWebhook === undefined ? Promise.resolve() : host(hostedWebhook.port, hostedWebhook.metrics);
  const hostFailed = new Promise<Error>((resolve) => {
    hosting.then(
      () => (hosted = true),
      (err: unknown) => resolve(err as Error),
    );
  });
  const withHosted: OperatorOptions =
    hostedWebhook === undefined
      ? o
      : { ...o, hostedMetrics: hostedWebhook.metrics.registry, hostedReady: () => hosted };
  const op = await startOperator(
    o.metricsSecure
      ? {
          ...withHosted,
          metricsTLS: await metricsServingCert({
            ...(o.metricsCertPath !== undefined ? { dir: o.metricsCertPath } : {}),
            certName: o.metricsCertName,
            keyName: o.metricsCertKey,
            log: o.log.with({ component: 'metrics' }),
          }),
        }
      : withHosted,
  );
  const conditionRef = operatorConditionRef();
  const stopReporting =
    conditionRef === undefined
      ? () => undefined
      : reportOperatorCondition({
          transport: await transportOf(o),
          ref: conditionRef,
          health: () => op.health(),
          log: o.log.with({ component: 'operator-condition' }),
        });
  const migrating = new AbortController();
  const migrationFailed = new Promise<number>((resolve) => {
    if (flags.migrateStorageOnStart !== true) return;
    void migrateOnStart(o, migrating.signal).then((failure) => {
      if (failure === undefined) return;
      process.stderr.write(
        `operator: --migrate-storage-on-start failed, stopping: ${failure} (it needs update on aitasks and on customresourcedefinitions/status of ${CRD_NAME}, as the shipped RBAC grants; or drop the flag)\n`,
      );
      resolve(1);
    });
  });
  let stopping = false;
  /**
   * Stops everything and exits with `code`; the webhook closes `webhookDelayMs` after the
   * rest (requests the Service still routes here meanwhile are answered). A second call
   * exits at once.
   */
  const stop = async (code: number, webhookDelayMs = 0): Promise<never> => {
    if (!stopping) {
      stopping = true;
      clearInterval(certTimer);
      stopFollowing();
      stopKeyRetries();
      stopCAChecks();
      stopReporting();
      migrating.abort();
      const closeWebhook = async (): Promise<void> => {
        if (webhook === undefined) return;
        if (webhookDelayMs > 0) {
          o.log.info('still answering conversions before closing the webhook', { delayMs: webhookDelayMs });
          await new Promise((r) => setTimeout(r, webhookDelayMs));
        }
        await webhook.close();
      };
      await Promise.all([op.stop(), closeWebhook()]);
    }
    process.exit(code);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      o.log.info('signal received', { signal: sig, host: hostname() });
      void stop(0, sig === 'SIGTERM' ? flags.webhookShutdownDelay * 1000 : 0);
    });
  }
  const webhookFailed = hostFailed.then((err) => {
    process.stderr.write(`operator: ${err.message}\n`);
    return 1;
  });
  await stop(await Promise.race([op.finished, migrationFailed, webhookFailed]));
}

command.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`operator: ${(err as Error).message}\n`);
  process.exit(1);
});

/**
 * The opt-in startup migration, run once the operator has started: when this process hosts
 * the conversion webhook, its pod must be Ready before the webhook's Service reaches it, and
 * migrating needs the webhook. Idempotent and safe on every replica at once. A refusal (the
 * conversion webhook not reachable yet) or any other error a retry can fix is logged and
 * retried after 5 s, doubling up to 5 min, until it succeeds or `signal` aborts. Forbidden,
 * Unauthorized and Invalid cannot be fixed by retrying (the RBAC or the CRD is wrong): the
 * promise then resolves with the message, and the caller stops the process with exit code
 * 1, so a migration the user asked for and that cannot happen shows as a failing pod with
 * one line saying why. Resolves undefined when done or aborted.
 */
async function migrateOnStart(o: OperatorOptions, signal: AbortSignal): Promise<string | undefined> {
  const log = o.log.with({ component: 'storage-migration' });
  for (let delayMs = 5_000; !signal.aborted; delayMs = Math.min(delayMs * 2, 300_000)) {
    try {
      const r = await migrateStorage(await transportOf(o), {
        signal,
        onProgress: (p) => log.info('storage migration progress', { ...p }),
      });
      log.info('storage migration done', {
        seen: r.seen,
        rewritten: r.rewritten,
        storedVersions: r.storedVersionsAfter,
      });
      return undefined;
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof ForbiddenError || err instanceof UnauthorizedError || err instanceof InvalidError) {
        log.error('storage migration failed and cannot succeed by retrying', { err: message });
        return message;
      }
      log[err instanceof MigrationRefused ? 'warn' : 'error']('storage migration not done yet; retrying', {
        err: message,
        retryInMs: delayMs,
      });
    }
    await new Promise<void>((r) => {
      const timer = setTimeout(r, delayMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        r();
      });
    });
  }
  return undefined;
}
