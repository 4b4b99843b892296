// The webhook follows its certificate Secret through the API, on the real apiserver: a
// server started with certificate A (files) serves the Secret's certificate B after one
// poll, then C after the Secret changes — what OLM does during an upgrade — while its
// files still hold A. A Secret without a key pair keeps the served certificate.

import assert from 'node:assert/strict';
import * as https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../api/log.ts';
import { ResourceClient } from '../api/kube/resources.ts';
import { startWebhookServer } from '../conversion-webhook/server.ts';
import { createServingCert, type ServingCert } from '../scripts/lib/certs.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { followCertSecret } from './webhook-cert-secret.ts';

const quiet = createLogger('test', { level: 'error' });
const b64 = (file: string): string => readFileSync(file).toString('base64');

/** Whether a TLS client trusting only `cert`'s CA gets /healthz from the server. */
function trusts(port: number, cert: ServingCert): Promise<boolean> {
  return new Promise((resolve) => {
    https
      .get({ host: '127.0.0.1', port, path: '/healthz', ca: cert.caPem, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      })
      .on('error', () => resolve(false));
  });
}

test('the served certificate follows the Secret, ahead of the files', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-cert-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [a, b, c] = ['a', 'b', 'c'].map((n) => createServingCert(join(dir, n))) as [
    ServingCert,
    ServingCert,
    ServingCert,
  ];
  const ns = await freshNamespace('cert-secret', (fn) => t.after(fn));
  const transport = await testTransport();
  const secrets = new ResourceClient<object>(transport, {
    group: '',
    version: 'v1',
    plural: 'secrets',
    namespaced: true,
  });
  const secret = (cert: ServingCert) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'webhook-cert' },
    type: 'Opaque',
    data: { 'tls.crt': b64(cert.certFile), 'tls.key': b64(cert.keyFile) },
  });
  await secrets.create(ns, secret(b));
  const server = await startWebhookServer({ port: 0, host: '127.0.0.1', cert: a, logger: quiet });
  t.after(() => server.close(100));
  assert.equal(await trusts(server.port, a), true, 'starts with the files');

  const stop = followCertSecret({
    transport,
    namespace: ns,
    name: 'webhook-cert',
    server,
    log: quiet,
    intervalMs: 200,
  });
  t.after(stop);
  await eventually('the Secret certificate B served', async () =>
    (await trusts(server.port, b)) ? true : undefined,
  );
  await secrets.replace(ns, 'webhook-cert', secret(c));
  await eventually('the changed Secret certificate C served', async () =>
    (await trusts(server.port, c)) ? true : undefined,
  );
  assert.equal(await trusts(server.port, a), false);

  await secrets.replace(ns, 'webhook-cert', { ...secret(c), data: { other: 'eA==' } });
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(
    await trusts(server.port, c),
    true,
    'a Secret without a key pair keeps the served certificate',
  );
});
