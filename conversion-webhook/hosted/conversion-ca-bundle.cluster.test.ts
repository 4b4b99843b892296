// The CA put back into a CRD's conversion webhook, on the real apiserver, as an OLM upgrade
// needs it: a CRD (its own group, so no other test is touched) whose webhook points at the
// operator's Service gets OLM's CA from the followed Secret; replaced with a copy without a
// caBundle, as an InstallPlan does, it gets it back at the next poll; a caBundle someone
// wrote is never overwritten, and a webhook behind another Service is left alone.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../lib/log.ts';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import { serviceOfCertSecret } from './ca-bundle.ts';
import { startWebhookServer } from '../server.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freshNamespace, testTransport } from '../../test/support/cluster.ts';
import { scratchCRD } from '../../test/support/scratch-crd.ts';
import { eventually } from '../../test/support/operator.ts';
import { conversionCABundleKeeper } from './conversion-ca-bundle.ts';
import { followCertSecret } from './webhook-cert-secret.ts';

const quiet = createLogger('test', { level: 'error' });

interface CRD {
  metadata: { name: string; resourceVersion?: string };
  spec: {
    group: string;
    names: { plural: string; singular: string; kind: string; listKind: string };
    scope: string;
    versions: { name: string; served: boolean; storage: boolean; schema: unknown }[];
    conversion: {
      strategy: string;
      webhook: {
        conversionReviewVersions: string[];
        clientConfig: {
          service: { namespace: string; name: string; path: string; port: number };
          caBundle?: string;
        };
      };
    };
  };
}

/** A two-version CRD in its own group whose conversion webhook is Service `ns/service`, without a caBundle. */
function bundleCopy(group: string, ns: string, service: string): CRD {
  const base = scratchCRD(group, ['v1', 'v2']);
  return {
    ...base,
    spec: {
      ...base.spec,
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { service: { namespace: ns, name: service, path: '/convert', port: 443 } },
        },
      },
    },
  };
}

test("OLM's CA goes back into a CRD whose webhook lost it, and nowhere else", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-ca-bundle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = createServingCert(join(dir, 'olm'));
  const ca = Buffer.from(cert.caPem).toString('base64');
  const ns = await freshNamespace('ca-bundle', (fn) => t.after(fn));
  const transport = await testTransport();
  const crds = new ResourceClient<CRD>(transport, CRD_RESOURCE);
  const secrets = new ResourceClient<object>(transport, {
    group: '',
    version: 'v1',
    plural: 'secrets',
    namespaced: true,
  });
  const secretName = 'aiops-operator-service-cert';
  await secrets.create(ns, {
    metadata: { name: secretName },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': readFileSync(cert.certFile).toString('base64'),
      'tls.key': readFileSync(cert.keyFile).toString('base64'),
      olmCAKey: ca,
    },
  });
  const suffix = randomBytes(3).toString('hex');
  const ours = await crds.create(
    undefined,
    bundleCopy(`ours-${suffix}.aiops.example.com`, ns, 'aiops-operator-service'),
  );
  const theirs = await crds.create(
    undefined,
    bundleCopy(`theirs-${suffix}.aiops.example.com`, ns, 'someone-else'),
  );
  t.after(async () => {
    for (const c of [ours, theirs]) await crds.delete(undefined, c.metadata.name).catch(() => undefined);
  });

  const server = await startWebhookServer({ port: 0, host: '127.0.0.1', cert: cert, logger: quiet });
  t.after(() => server.close(100));
  const service = serviceOfCertSecret(ns, secretName);
  assert.ok(service);
  const keepers = [ours, theirs].map((c) =>
    conversionCABundleKeeper({ transport, crdName: c.metadata.name, service, log: quiet }),
  );
  let passes = 0;
  const stop = followCertSecret({
    transport,
    namespace: ns,
    name: secretName,
    server,
    log: quiet,
    intervalMs: 200,
    onCA: async (caBundle) => {
      for (const keep of keepers) await keep(caBundle);
      passes++;
    },
  });
  t.after(stop);

  const caBundleOf = async (name: string): Promise<string | undefined> =>
    (await crds.get(undefined, name)).spec.conversion.webhook.clientConfig.caBundle;
  await eventually('the CA in our CRD', async () =>
    (await caBundleOf(ours.metadata.name)) === ca ? true : undefined,
  );

  // What an InstallPlan does: the CRD replaced by the bundle's copy, which has no caBundle.
  const live = await crds.get(undefined, ours.metadata.name);
  const replaced = bundleCopy(ours.spec.group, ns, 'aiops-operator-service');
  await crds.replace(undefined, ours.metadata.name, {
    ...replaced,
    metadata: {
      ...replaced.metadata,
      ...(live.metadata.resourceVersion ? { resourceVersion: live.metadata.resourceVersion } : {}),
    },
  });
  await eventually('the CA back after the replace', async () =>
    (await caBundleOf(ours.metadata.name)) === ca ? true : undefined,
  );

  // A caBundle someone else wrote stays; a webhook behind another Service is not ours.
  const other = createServingCert(join(dir, 'other'));
  const otherCA = Buffer.from(other.caPem).toString('base64');
  await crds.patch(undefined, ours.metadata.name, {
    spec: { conversion: { webhook: { clientConfig: { caBundle: otherCA } } } },
  });
  // Two more finished passes: at least the second read the CRD after the patch.
  const before = passes;
  await eventually('two keeper passes after the patch', () =>
    Promise.resolve(passes >= before + 2 ? true : undefined),
  );
  assert.equal(await caBundleOf(ours.metadata.name), otherCA);
  assert.equal(await caBundleOf(theirs.metadata.name), undefined);
});
