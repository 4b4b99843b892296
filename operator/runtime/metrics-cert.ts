// The certificate /metrics is served with over HTTPS (`--metrics-secure`): from files when
// `--metrics-cert-path` names a directory (cert-manager's or another issuer's Secret mounted
// there; reloaded when the kubelet swaps it), else a self-signed one made at start and kept
// in memory only, as controller-runtime does without a cert path. Scrapers then skip
// verification (a ServiceMonitor's `tlsConfig.insecureSkipVerify`) and rely on the bearer
// token check for access; the connection is still encrypted.

import { hostname } from 'node:os';
import { join } from 'node:path';
import { readCertPair, watchCertPair } from '../../lib/tls/serving.ts';
import type { Logger } from '../../lib/log.ts';
import type { SecureMetrics } from './server.ts';

/** Where the metrics certificate comes from (the `--metrics-cert-*` flags). */
export interface MetricsCertSource {
  /** Directory of the pair; unset: self-signed. */
  readonly dir?: string;
  /** File names in `dir` (default tls.crt and tls.key, as the flags). */
  readonly certName: string;
  readonly keyName: string;
  readonly log: Logger;
}

/**
 * The metrics serving certificate. From `dir`: read now (throws naming the missing file) and
 * polled every second, a pair that cannot be read being logged and the last good one kept.
 * Self-signed: for the host name and localhost, valid 10 years (it lives as long as the
 * process, which never renews it).
 */
export async function metricsServingCert(
  src: MetricsCertSource,
): Promise<Pick<SecureMetrics, 'pair' | 'watch'>> {
  if (src.dir !== undefined) {
    const paths = { certFile: join(src.dir, src.certName), keyFile: join(src.dir, src.keyName) };
    return {
      pair: readCertPair(paths),
      watch: (apply) =>
        watchCertPair(
          paths,
          (pair) => {
            apply(pair);
            src.log.info('metrics serving certificate reloaded', { dir: src.dir });
          },
          (err) =>
            src.log.error('metrics serving certificate not reloaded; serving the last one', {
              err: err.message,
            }),
        ),
    };
  }
  // Loaded only here, as the webhook's rotation is: the X.509 and ASN.1 libraries cost an
  // install that mounts its certificate start-up time and idle memory.
  const { generateCA, issueServingCert } = await import('../../lib/tls/self-signed.ts');
  const ca = await generateCA();
  const leaf = await issueServingCert(ca, [hostname(), 'localhost', '127.0.0.1'], new Date(), 3650);
  return { pair: { cert: leaf.certPem, key: leaf.keyPem } };
}
