// The webhook follows its certificate Secret through the API, on the real apiserver: a
// server started with certificate A (files) serves the Secret's certificate B after one
// poll, then C after the Secret changes — what OLM does during an upgrade — while its
// files still hold A. A Secret without a key pair keeps the served certificate. And with
// polling an hour apart, a Go client (kubectl, whose crypto/tls the kube-apiserver shares)
// that rejects the served certificate makes the server read the Secret at once.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as https from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { createLogger } from '../../lib/log.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { startWebhookServer } from '../server.ts';
import { createServingCert, type ServingCert } from '../../scripts/lib/certs.ts';
import { freshNamespace, testTransport } from '../../test/support/cluster.ts';
import { eventually } from '../../test/support/operator.ts';
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

/**
 * Whether kubectl trusting only `cert`'s CA gets /healthz from the server. A Go client that
 * does not trust the certificate ends the handshake with a bad_certificate alert, as the
 * kube-apiserver does when the CRD's caBundle and the served certificate disagree.
 */
async function goClientTrusts(port: number, cert: ServingCert): Promise<boolean> {
  const ca = join(cert.dir, 'ca-only.crt');
  writeFileSync(ca, cert.caPem);
  // Not execFileSync: the server answers from this process's event loop.
  return promisify(execFile)(
    'kubectl',
    [
      'get',
      '--raw',
      '/healthz',
      `--server=https://127.0.0.1:${port}`,
      `--certificate-authority=${ca}`,
      '--token=unused',
      '--request-timeout=5s',
    ],
    { env: { ...process.env, KUBECONFIG: '/dev/null' } },
  ).then(
    () => true,
    () => false,
  );
}

/** The webhook-cert Secret holding `cert`. */
function certSecret(cert: ServingCert) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'webhook-cert' },
    type: 'Opaque',
    data: { 'tls.crt': b64(cert.certFile), 'tls.key': b64(cert.keyFile) },
  };
}

/**
 * Three certificates A, B, C; Secret `webhook-cert` holding B in a fresh namespace; a webhook
 * server started with A's files and following the Secret every `intervalMs`, its warnings
 * collected in `warnings`. All removed after `t`.
 */
async function followingServer(t: TestContext, intervalMs: number) {
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
  await secrets.create(ns, certSecret(b));
  const server = await startWebhookServer({ port: 0, host: '127.0.0.1', cert: a, logger: quiet });
  t.after(() => server.close(100));
  const startsWithFiles = await trusts(server.port, a);
  const warnings: string[] = [];
  const stop = followCertSecret({
    transport,
    namespace: ns,
    name: 'webhook-cert',
    server,
    log: createLogger('test', { level: 'warn', write: (line) => warnings.push(line) }),
    intervalMs,
  });
  t.after(stop);
  return { a, b, c, ns, secrets, server, startsWithFiles, warnings };
}

test('the served certificate follows the Secret, ahead of the files', async (t) => {
  const { a, b, c, ns, secrets, server, startsWithFiles, warnings } = await followingServer(t, 200);
  assert.equal(startsWithFiles, true, 'starts with the files');
  await eventually('the Secret certificate B served', async () =>
    (await trusts(server.port, b)) ? true : undefined,
  );
  await secrets.replace(ns, 'webhook-cert', certSecret(c));
  await eventually('the changed Secret certificate C served', async () =>
    (await trusts(server.port, c)) ? true : undefined,
  );
  assert.equal(await trusts(server.port, a), false);

  await secrets.replace(ns, 'webhook-cert', { ...certSecret(c), data: { other: 'eA==' } });
  await eventually('a poll to read the Secret without a key pair', () =>
    Promise.resolve(warnings.some((w) => w.includes('has no tls.crt and tls.key')) ? true : undefined),
  );
  assert.equal(
    await trusts(server.port, c),
    true,
    'a Secret without a key pair keeps the served certificate',
  );
});

test('a client rejecting the served certificate makes the server read its Secret at once', async (t) => {
  const { b, c, ns, secrets, server } = await followingServer(t, 3_600_000);
  await eventually('the Secret certificate B served (the first read)', async () =>
    (await trusts(server.port, b)) ? true : undefined,
  );
  // OLM's new certificate, as at an upgrade; the next poll is an hour away.
  await secrets.replace(ns, 'webhook-cert', certSecret(c));
  assert.equal(await goClientTrusts(server.port, c), false, 'B is still served: the client rejects it');
  await eventually('certificate C served after the rejection', async () =>
    (await goClientTrusts(server.port, c)) ? true : undefined,
  );
  const rejections = (await server.metrics.certificateRejections.get()).values[0]?.value ?? 0;
  assert.ok(rejections >= 1, `aiops_conversion_certificate_rejections_total is ${rejections}`);
});
