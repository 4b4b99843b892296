// Self-signed certificate management against the real apiserver: the Secret is created
// once and shared, files land where the server reads them, the CRD's caBundle follows
// the CA, renewal keeps the CA, and concurrent replicas converge on one CA.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { syncServingCert, type RotationOptions } from './cert-rotation.ts';
import { startWebhookServer } from './server.ts';
import { certPathsIn } from './tls.ts';
import { createLogger } from '../api/log.ts';
import { ResourceClient } from '../api/kube/resources.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { scratchCRD } from '../test/support/scratch-crd.ts';
import { installCRD, crdClient } from '../scripts/lib/crd-install.ts';
import type { CustomResourceDefinition } from '../api/crd.ts';

const quiet = createLogger('test', { level: 'error' });

function probe(port: number, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path: '/healthz', ca, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

async function rotationCRD(): Promise<string> {
  const base = scratchCRD(`rot${randomBytes(3).toString('hex')}.aiops.test`);
  const crd = {
    ...base,
    spec: {
      ...base.spec,
      names: { ...base.spec.names, shortNames: [], categories: [] },
      versions: base.spec.versions.map((v) => ({
        ...v,
        subresources: { status: {} },
        additionalPrinterColumns: [],
      })),
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:1/convert' } },
      },
    },
  } as unknown as CustomResourceDefinition;
  await installCRD(await testTransport(), crd);
  return crd.metadata.name;
}

test('self-signed serving certificate lifecycle', async (t) => {
  const transport = await testTransport();
  const ns = await freshNamespace('certs', t.after.bind(t));
  const crdName = await rotationCRD();
  t.after(() =>
    crdClient(transport)
      .delete(undefined, crdName)
      .then(() => undefined),
  );
  const dir = mkdtempSync(join(tmpdir(), 'aiops-certs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const base: RotationOptions = {
    transport,
    namespace: ns,
    secretName: 'aiops-webhook-cert',
    dnsNames: ['localhost', '127.0.0.1'],
    certDir: join(dir, 'a'),
    crdName,
    log: quiet,
  };
  const secrets = new ResourceClient<{
    metadata: { resourceVersion?: string };
    data?: Record<string, string>;
  }>(transport, { group: '', version: 'v1', plural: 'secrets', namespaced: true });

  const ca = await syncServingCert(base);
  const secret = await secrets.get(ns, 'aiops-webhook-cert');
  assert.deepEqual(Object.keys(secret.data ?? {}).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
  const crd = (await crdClient(transport).get(undefined, crdName)) as unknown as {
    spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } };
  };
  assert.equal(
    Buffer.from(crd.spec.conversion.webhook.clientConfig.caBundle, 'base64').toString(),
    ca,
    'caBundle is the CA',
  );

  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert: certPathsIn(base.certDir),
    logger: quiet,
    certPollMs: 100,
  });
  t.after(() => server.close(500));
  assert.equal(await probe(server.port, ca), 200, 'the served leaf chains to the CA');

  await syncServingCert(base);
  assert.equal(
    (await secrets.get(ns, 'aiops-webhook-cert')).metadata.resourceVersion,
    secret.metadata.resourceVersion,
    'a valid cert is left alone',
  );

  const before = readFileSync(join(base.certDir, 'tls.crt'), 'utf8');
  const sameCA = await syncServingCert({ ...base, renewBeforeDays: 400 });
  assert.equal(sameCA, ca, 'renewal keeps the CA, so the caBundle stays valid');
  assert.notEqual(readFileSync(join(base.certDir, 'tls.crt'), 'utf8'), before, 'the leaf was renewed');
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(await probe(server.port, ca), 200, 'the reloaded leaf still verifies');

  const racers = await Promise.all(
    [1, 2, 3].map((i) => syncServingCert({ ...base, secretName: 'raced', certDir: join(dir, `r${i}`) })),
  );
  assert.equal(new Set(racers).size, 1, 'concurrent replicas agree on one CA');
});
