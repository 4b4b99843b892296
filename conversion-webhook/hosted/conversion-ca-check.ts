// Tells the apiserver's failing conversions from a stranger's handshake. A client that does
// not trust the webhook's certificate ends the TLS handshake, and anyone who reaches the port
// can do that, so a rejection alone proves nothing. After one, the hosted webhook reads the
// CRD and checks whether its conversion caBundle verifies the certificate served now (what
// the apiserver checks): aiops_conversion_ca_bundle_mismatch is 1 only when it does not, and
// the AIOpsConversionCertificateRejected alert needs both. Checks are paced (one per pause,
// however many reject) and repeated while the mismatch lasts, so the gauge clears once fixed.

import type { Logger } from '../../lib/log.ts';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { ConversionView } from './ca-bundle.ts';
import { caBundleTrusts } from '../../lib/tls/ca-trust.ts';
import type { WebhookMetrics } from '../metrics.ts';
import type { WebhookServer } from '../server.ts';

/** Shortest time between two checks of the CRD, in ms: 10 s. */
export const CA_CHECK_PAUSE_MS = 10_000;

/** Time between checks while the caBundle does not verify the served certificate, in ms: 30 s. */
export const CA_RECHECK_MS = 30_000;

/**
 * Checks CRD `crdName`'s caBundle against `server`'s certificate after each certificate
 * rejection (at most one check per `pauseMs`, default CA_CHECK_PAUSE_MS; a rejection during
 * the pause gets a check at its end), and every `recheckMs` (default CA_RECHECK_MS) while
 * they disagree; sets `metrics.caBundleMismatch` and counts `metrics.caBundleChecks`. A failed
 * read (get on the CRD, which the shipped RBAC grants) is counted as `error`, logged, and
 * leaves the gauge as it was. Returns a function that stops it.
 */
export function checkCABundleOnRejection(opts: {
  readonly transport: KubeTransport;
  readonly crdName: string;
  readonly server: WebhookServer;
  readonly metrics: WebhookMetrics;
  readonly log: Logger;
  readonly pauseMs?: number;
  readonly recheckMs?: number;
}): () => void {
  const crds = new ResourceClient<ConversionView>(opts.transport, CRD_RESOURCE);
  const pauseMs = opts.pauseMs ?? CA_CHECK_PAUSE_MS;
  let last = -Infinity;
  let mismatch = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = async (): Promise<void> => {
    timer = undefined;
    last = Date.now();
    try {
      const crd = await crds.get(undefined, opts.crdName);
      const trusted = caBundleTrusts(
        crd.spec.conversion?.webhook?.clientConfig?.caBundle,
        opts.server.servingCertificate(),
      );
      opts.metrics.caBundleChecks.inc({ result: trusted ? 'trusted' : 'untrusted' });
      opts.metrics.caBundleMismatch.set(trusted ? 0 : 1);
      if (trusted !== !mismatch)
        opts.log[trusted ? 'info' : 'error'](
          trusted
            ? "the CRD's conversion caBundle verifies the served certificate again"
            : "the CRD's conversion caBundle does not verify the served certificate: the apiserver's conversions fail",
          { crd: opts.crdName },
        );
      mismatch = !trusted;
    } catch (err) {
      opts.metrics.caBundleChecks.inc({ result: 'error' });
      opts.log.warn(
        'cannot read the CRD to check its conversion caBundle; checking again at the next rejection',
        {
          crd: opts.crdName,
          err: (err as Error).message,
        },
      );
    }
    if (mismatch && !stopped) schedule(opts.recheckMs ?? CA_RECHECK_MS);
  };
  const schedule = (delayMs: number): void => {
    if (timer !== undefined || stopped) return;
    timer = setTimeout(() => void check(), Math.max(0, delayMs));
    timer.unref();
  };
  const stopListening = opts.server.onCertificateRejected(() => schedule(last + pauseMs - Date.now()));
  return () => {
    stopped = true;
    clearTimeout(timer);
    stopListening();
  };
}
