// Self-signed certificate management against the real apiserver: the Secret is created
// once and shared, files land where the server reads them, the CRD's caBundle follows
// the CA, renewal keeps the CA and the running server serves the renewed leaf, a new CA
// is served without a restart (and the old one stops verifying), and concurrent replicas
// converge on one CA.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import * as tls from 'node:tls';
import type { PeerCertificate } from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, X509Certificate } from 'node:crypto';
import { syncServingCert, type RotationOptions } from './cert-rotation.ts';
import { startWebhookServer } from './server.ts';
import { certPathsIn } from '../lib/tls/serving.ts';
import { createLogger } from '../lib/log.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { scratchCRD } from '../test/support/scratch-crd.ts';
import { installCRD, crdClient } from '../scripts/lib/crd-install.ts';
import type { CustomResourceDefinition } from '../api/crd.ts';

const quiet = createLogger('test', { level: 'error' });

/** GETs /healthz trusting only `ca`: the status and the SHA-256 fingerprint of the served leaf. */
function probe(port: number, ca: string): Promise<{ status: number; leaf: string }> {
  let leaf = '';
  const checkServerIdentity = (host: string, cert: PeerCertificate): Error | undefined => {
    leaf = cert.fingerprint256;
    return tls.checkServerIdentity(host, cert);
  };
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path: '/healthz', ca, agent: false, checkServerIdentity }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, leaf });
      })
      .on('error', reject);
  });
}

/** Probes (failures count as not yet) until the server serves `leafPem` to a client trusting `ca`. */
async function servesLeaf(port: number, ca: string, leafPem: string): Promise<void> {
  const want = new X509Certificate(leafPem).fingerprint256;
  let last = 'no probe yet';
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    const got = await probe(port, ca).then(
      (r) => (r.status === 200 && r.leaf === want ? undefined : `HTTP ${r.status}, leaf ${r.leaf}`),
      (err: unknown) => String(err),
    );
    if (got === undefined) return;
    last = got;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`the server never served the leaf in the cert directory (${want}); last: ${last}`);
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
  await servesLeaf(server.port, ca, readFileSync(join(base.certDir, 'tls.crt'), 'utf8'));

  await syncServingCert(base);
  assert.equal(
    (await secrets.get(ns, 'aiops-webhook-cert')).metadata.resourceVersion,
    secret.metadata.resourceVersion,
    'a valid cert is left alone',
  );

  // Another field of the Secret (the operator keeps its conversion stash key there).
  await secrets.patch(ns, 'aiops-webhook-cert', { data: { 'conversion-key': 'a2VlcCBtZQ==' } });
  const before = readFileSync(join(base.certDir, 'tls.crt'), 'utf8');
  const sameCA = await syncServingCert({ ...base, renewBeforeDays: 400 });
  assert.equal(
    (await secrets.get(ns, 'aiops-webhook-cert')).data?.['conversion-key'],
    'a2VlcCBtZQ==',
    'the renewal keeps the other fields',
  );
  assert.equal(sameCA, ca, 'renewal keeps the CA, so the caBundle stays valid');
  const renewed = readFileSync(join(base.certDir, 'tls.crt'), 'utf8');
  assert.notEqual(renewed, before, 'the leaf was renewed');
  await servesLeaf(server.port, ca, renewed);

  // A new CA (the Secret deleted, as by an admin): the server must reload the new leaf, since
  // only a reload makes the new CA verify and the old one stop verifying.
  await secrets.delete(ns, 'aiops-webhook-cert');
  const newCA = await syncServingCert(base);
  assert.notEqual(newCA, ca, 'a deleted Secret gets a new CA');
  await servesLeaf(server.port, newCA, readFileSync(join(base.certDir, 'tls.crt'), 'utf8'));
  await assert.rejects(probe(server.port, ca), 'the old CA no longer verifies the served leaf');

  const racers = await Promise.all(
    [1, 2, 3].map((i) => syncServingCert({ ...base, secretName: 'raced', certDir: join(dir, `r${i}`) })),
  );
  assert.equal(new Set(racers).size, 1, 'concurrent replicas agree on one CA');
});
