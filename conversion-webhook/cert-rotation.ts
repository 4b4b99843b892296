// Keeps the webhook's serving certificate valid without cert-manager (the plain install,
// `--self-signed-cert`): the CA and leaf live in a Secret shared by every replica, each
// replica copies them into its cert directory (which the server reloads), and the CRD's
// conversion caBundle is patched to the CA. Safe with several replicas: creation races
// end in AlreadyExists and updates are resourceVersion-bound, so the loser re-reads.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../lib/kube/errors.ts';
import { CRD_RESOURCE, ResourceClient } from '../lib/kube/resources.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import type { Logger } from '../lib/log.ts';
import { generateCA, inspectCert, issueServingCert } from '../lib/tls/self-signed.ts';

interface Secret {
  apiVersion?: 'v1';
  kind?: 'Secret';
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

interface CRDConversion {
  spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
}

export interface RotationOptions {
  transport: KubeTransport;
  /** Namespace of the Secret (the operator's). */
  namespace: string;
  /** Secret holding ca.crt, ca.key, tls.crt, tls.key. */
  secretName: string;
  /** DNS names the leaf must cover, e.g. `<service>.<ns>.svc`. */
  dnsNames: readonly string[];
  /** Directory the webhook server reads tls.crt/tls.key from. */
  certDir: string;
  /** CRD whose conversion caBundle to keep in sync. */
  crdName: string;
  /** Renew the leaf this many days before it expires (default 30). */
  renewBeforeDays?: number;
  log: Logger;
}

const secretType = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? '' : Buffer.from(s, 'base64').toString('utf8'));

/**
 * One pass: make sure the Secret holds a CA and a leaf valid for more than
 * `renewBeforeDays` covering `dnsNames`, write them to `certDir` if they differ, and
 * point the CRD's caBundle at the CA. Returns the CA PEM. Retries a lost race once.
 */
export async function syncServingCert(o: RotationOptions): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await syncOnce(o);
    } catch (err) {
      if (attempt >= 2 || !(err instanceof ConflictError || err instanceof AlreadyExistsError)) throw err;
    }
  }
}

async function syncOnce(o: RotationOptions): Promise<string> {
  const now = new Date();
  const secrets = new ResourceClient<Secret>(o.transport, secretType);
  const existing = await secrets.get(o.namespace, o.secretName).catch((err: unknown) => {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  });
  let caCert = unb64(existing?.data?.['ca.crt']);
  let caKey = unb64(existing?.data?.['ca.key']);
  let tlsCrt = unb64(existing?.data?.['tls.crt']);
  let tlsKey = unb64(existing?.data?.['tls.key']);
  let changed = false;
  if (caCert === '' || caKey === '') {
    ({ certPem: caCert, keyPem: caKey } = await generateCA(now));
    tlsCrt = '';
    changed = true;
  }
  if (tlsCrt === '' || needsRenewal(tlsCrt, o.dnsNames, now, o.renewBeforeDays ?? 30)) {
    ({ certPem: tlsCrt, keyPem: tlsKey } = await issueServingCert(
      { certPem: caCert, keyPem: caKey },
      o.dnsNames,
      now,
    ));
    changed = true;
  }
  if (changed) {
    // Other fields (the conversion stash key, conversion-webhook/hosted/conversion-key.ts) stay as they are.
    const data = {
      ...existing?.data,
      'ca.crt': b64(caCert),
      'ca.key': b64(caKey),
      'tls.crt': b64(tlsCrt),
      'tls.key': b64(tlsKey),
    };
    const labels = { 'app.kubernetes.io/part-of': 'aiops', 'app.kubernetes.io/component': 'webhook-cert' };
    if (existing === undefined) {
      await secrets.create(o.namespace, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: o.secretName, labels },
        type: 'Opaque',
        data,
      });
    } else {
      await secrets.replace(o.namespace, o.secretName, { ...existing, data });
    }
    o.log.info('webhook serving certificate issued', {
      secret: `${o.namespace}/${o.secretName}`,
      notAfter: inspectCert(tlsCrt).notAfter.toISOString(),
    });
  }
  writeIfChanged(o.certDir, 'tls.key', tlsKey);
  writeIfChanged(o.certDir, 'tls.crt', tlsCrt);
  await patchCABundle(o, caCert);
  return caCert;
}

function needsRenewal(pem: string, names: readonly string[], now: Date, renewBeforeDays: number): boolean {
  try {
    const info = inspectCert(pem);
    const missing = names.some((n) => !info.names.includes(n));
    return missing || info.notAfter.getTime() - now.getTime() < renewBeforeDays * 86_400_000;
  } catch {
    return true;
  }
}

function writeIfChanged(dir: string, file: string, content: string): void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  let current: string;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = '';
  }
  if (current === content) return;
  writeFileSync(`${path}.tmp`, content, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

async function patchCABundle(o: RotationOptions, caPem: string): Promise<void> {
  const crds = new ResourceClient<CRDConversion>(o.transport, CRD_RESOURCE);
  const crd = await crds.get(undefined, o.crdName);
  const conversion = crd.spec.conversion;
  if (conversion?.strategy !== 'Webhook') return;
  if (conversion.webhook?.clientConfig?.caBundle === b64(caPem)) return;
  await crds.patch(undefined, o.crdName, {
    spec: { conversion: { webhook: { clientConfig: { caBundle: b64(caPem) } } } },
  });
  o.log.info('CRD conversion caBundle updated', { crd: o.crdName });
}
