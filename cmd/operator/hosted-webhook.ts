// The conversion webhook the operator process hosts with --webhook-port, as one runnable of
// its manager: the key that signs its conversion stash from a Secret (retried while it cannot
// be read), its certificate with --self-signed-cert (issued, renewed, the CRD's caBundle
// patched), its server, the CRD caBundle check after certificate rejections, and with
// --webhook-cert-from-secret the certificate followed from a Secret. It starts beside the
// operator and stops on nothing: once told to stop it keeps answering conversions for the
// stop's drain time (SIGTERM: --webhook-shutdown-delay), then closes.

import { CRD_NAME } from '../../api/schema/common.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { Logger } from '../../lib/log.ts';
import type { Values } from '../../lib/options-table.ts';
import { certPathsIn } from '../../lib/tls/serving.ts';
import type { HOSTED_WEBHOOK_FLAGS } from '../../conversion-webhook/hosted/flags.ts';
import { startWebhookServer, type WebhookServer } from '../../conversion-webhook/server.ts';
import type { WebhookMetrics } from '../../conversion-webhook/metrics.ts';
import { followCertSecret } from '../../conversion-webhook/hosted/webhook-cert-secret.ts';
import { firstConversionKey, provideConversionKey } from '../../conversion-webhook/hosted/conversion-key.ts';
import { conversionCABundleKeeper } from '../../conversion-webhook/hosted/conversion-ca-bundle.ts';
import { checkCABundleOnRejection } from '../../conversion-webhook/hosted/conversion-ca-check.ts';
import { serviceOfCertSecret } from '../../conversion-webhook/hosted/ca-bundle.ts';
import { aborted } from '../../operator/assembly-parts.ts';
import { stopReason, type Runnable } from '../../operator/runtime/manager.ts';

/** The hosted webhook's parsed flags. */
export type HostedWebhookFlags = Values<typeof HOSTED_WEBHOOK_FLAGS>;

/** What the hosted webhook runs with besides its flags. */
export interface HostedWebhookDeps {
  readonly port: number;
  /** Address it listens on (the operator's --bind-address). */
  readonly host: string;
  readonly metrics: WebhookMetrics;
  /** The process' shared transport (made on first use). */
  readonly transport: () => Promise<KubeTransport>;
  /** The pod's namespace, where its Secrets are. */
  readonly namespace: string;
  /** The operator's log; the webhook's own lines carry component=conversion-webhook. */
  readonly log: Logger;
  /** Called once the server answers. */
  readonly onServing: () => void;
}

/** With --self-signed-cert: issues or renews the certificate now and every --cert-sync-interval; returns the stop. */
async function syncCertificate(f: HostedWebhookFlags, d: HostedWebhookDeps): Promise<() => void> {
  // Loaded only here: the X.509 and ASN.1 libraries it brings cost every other install
  // (OLM's, a cert-manager one) start-up time and idle memory (npm run bench -- peer).
  const { syncServingCert } = await import('../../conversion-webhook/cert-rotation.ts');
  const transport = await d.transport();
  const ns = d.namespace;
  const svc = f.webhookService;
  const sync = () =>
    syncServingCert({
      transport,
      namespace: ns,
      secretName: f.webhookSecret,
      dnsNames: [`${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`, svc],
      certDir: f.webhookCertDir,
      crdName: CRD_NAME,
      log: d.log,
    });
  await sync();
  const timer = setInterval(() => {
    sync().catch((err: unknown) =>
      d.log.error('webhook certificate sync failed; retrying at the next interval', {
        err: (err as Error).message,
      }),
    );
  }, f.certSyncInterval * 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/** With --webhook-cert-from-secret: follows the Secret `name`'s certificate and CA; returns the stop. */
async function followSecret(d: HostedWebhookDeps, server: WebhookServer, name: string): Promise<() => void> {
  const transport = await d.transport();
  const service = serviceOfCertSecret(d.namespace, name);
  return followCertSecret({
    transport,
    namespace: d.namespace,
    name,
    server,
    log: d.log,
    ...(service
      ? { onCA: conversionCABundleKeeper({ transport, crdName: CRD_NAME, service, log: d.log }) }
      : {}),
  });
}

/** The hosted webhook as a runnable (see the header); rejects when it cannot start. */
export function hostedWebhookPart(f: HostedWebhookFlags, d: HostedWebhookDeps): Runnable {
  return {
    name: 'conversion-webhook',
    async run(signal, ready) {
      const log = d.log.with({ component: 'conversion-webhook' });
      const logged = { ...d, log };
      const stops: (() => void)[] = [];
      const keySecret = {
        transport: await d.transport(),
        namespace: d.namespace,
        name: f.conversionKeySecret,
      };
      const stashKey = await firstConversionKey({ ...keySecret, log });
      if (f.selfSignedCert) stops.push(await syncCertificate(f, logged));
      const server = await startWebhookServer({
        port: d.port,
        host: d.host,
        cert: certPathsIn(f.webhookCertDir),
        logger: log,
        metrics: d.metrics,
        stashKey,
        maxConcurrentReviews: f.webhookMaxConcurrentReviews,
      });
      if (!(stashKey instanceof Uint8Array)) stops.push(provideConversionKey({ ...keySecret, server, log }));
      const transport = await d.transport();
      stops.push(checkCABundleOnRejection({ transport, crdName: CRD_NAME, server, metrics: d.metrics, log }));
      if (f.webhookCertFromSecret !== undefined)
        stops.push(await followSecret(logged, server, f.webhookCertFromSecret));
      d.onServing();
      ready();
      await aborted(signal);
      for (const stop of stops) stop();
      const { drainMs } = stopReason(signal);
      if (drainMs > 0) {
        d.log.info('still answering conversions before closing the webhook', { delayMs: drainMs });
        await new Promise((r) => setTimeout(r, drainMs));
      }
      await server.close();
    },
  };
}
