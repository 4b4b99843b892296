// The conversion stash key Secret on the real apiserver: the first call creates it, every
// later call (and every replica racing for it) gets the same key, the key joins a Secret
// that already holds the self-signed certificate without touching it and survives the
// certificate's renewal, and a Secret that holds no usable key is an error, never silently
// replaced. While the key cannot be read, the hosted webhook has none: a review that must
// sign or verify a stash fails naming the Secret (never signed with a stand-in key), any
// other converts, and the first retry that reads the key signs with it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { signStash } from '../../api/conversion/stash.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../../api/install.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { createLogger } from '../../lib/log.ts';
import { startWebhookServer } from '../server.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freshNamespace, testTransport } from '../../test/support/cluster.ts';
import { ensureConversionKey, firstConversionKey, KEY_DATA, provideConversionKey } from './conversion-key.ts';

interface Secret {
  metadata: { name: string; resourceVersion?: string };
  data?: Record<string, string>;
}

const SECRETS = { group: '', version: 'v1', plural: 'secrets', namespaced: true } as const;

test('the key Secret is created once and read by every replica', async (t) => {
  const namespace = await freshNamespace('conv-key', t.after.bind(t));
  const transport = await testTransport();
  const racing = await Promise.all(
    Array.from({ length: 5 }, () =>
      ensureConversionKey({ transport, namespace, name: 'aiops-webhook-service-cert' }),
    ),
  );
  const [first] = racing;
  assert.ok(first);
  assert.equal(first.length, 32);
  for (const key of racing) assert.deepEqual(key, first, 'racing replicas end with the same key');
  assert.deepEqual(
    await ensureConversionKey({ transport, namespace, name: 'aiops-webhook-service-cert' }),
    first,
  );

  const secrets = new ResourceClient<{ metadata: { name: string }; data?: Record<string, string> }>(
    transport,
    {
      group: '',
      version: 'v1',
      plural: 'secrets',
      namespaced: true,
    },
  );
  const cert = { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' };
  await secrets.create(namespace, { metadata: { name: 'with-cert' }, data: cert });
  const joined = await ensureConversionKey({ transport, namespace, name: 'with-cert' });
  const withCert = await secrets.get(namespace, 'with-cert');
  assert.deepEqual(
    withCert.data,
    { ...cert, [KEY_DATA]: joined.toString('base64') },
    'the certificate is kept',
  );
  assert.deepEqual(await ensureConversionKey({ transport, namespace, name: 'with-cert' }), joined);

  await secrets.create(namespace, { metadata: { name: 'short' }, data: { [KEY_DATA]: 'c2hvcnQ=' } });
  await assert.rejects(
    ensureConversionKey({ transport, namespace, name: 'short' }),
    /Secret .*\/short has no conversion-key of at least 32 bytes/,
  );
});

/** What a ConversionReview answers. */
interface Answer {
  uid: string;
  result: { status: string; message?: string };
  convertedObjects?: { metadata: { annotations?: Record<string, string> } }[];
}

/** The ConversionReview response of POSTing one review of `object` to `desired` at `port`. */
async function review(port: number, ca: string, object: unknown, desired: string): Promise<Answer> {
  const body = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'r-1', desiredAPIVersion: desired, objects: [object] },
  });
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/convert',
        ca,
        servername: 'localhost',
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  assert.equal(status, 200, text);
  return (JSON.parse(text) as { response: Answer }).response;
}

test('while the key Secret cannot be read, a review that needs the key fails naming it; once read, the key signs', async (t) => {
  const namespace = await freshNamespace('conv-key-wait', t.after.bind(t));
  const transport = await testTransport();
  const secrets = new ResourceClient<Secret>(transport, SECRETS);
  // A key too short to use: ensureConversionKey refuses it and never replaces it.
  await secrets.create(namespace, { metadata: { name: 'unreadable' }, data: { [KEY_DATA]: 'c2hvcnQ=' } });
  const dir = mkdtempSync(join(tmpdir(), 'aiops-conv-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = createServingCert(dir);
  const log = createLogger('test', { level: 'error' });
  const secret = { transport, namespace, name: 'unreadable', log, retryMs: 200 };

  const stashKey = await firstConversionKey(secret);
  assert.ok(!(stashKey instanceof Uint8Array), 'no key, not a stand-in of this process');
  const server = await startWebhookServer({ port: 0, host: '127.0.0.1', cert, logger: log, stashKey });
  t.after(() => server.close(1000));
  const stop = provideConversionKey({ ...secret, server });
  t.after(stop);

  const uid = 'c0ffee00-0000-4000-8000-000000000001';
  const metadata = { name: 'x', namespace, uid };
  const spec = {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 0.5 },
    remediation: { action: 'RestartPod' },
  };
  // v1 cannot say dryRun or approval: down-converting this writes (signs) a stash.
  const writesStash = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata,
    spec: { ...spec, dryRun: true, approval: 'Manual' },
  };
  // A well-formed signature bound to the object: only the key can say whether it vouches.
  const stashText = JSON.stringify({ v2: [{ p: ['spec', 'dryRun'], v: true }] });
  const verifiesStash = {
    apiVersion: 'aiops.example.com/v1',
    kind: 'AITask',
    metadata: {
      ...metadata,
      annotations: {
        [CONVERSION_ANNOTATION]: stashText,
        [CONVERSION_MAC_ANNOTATION]: signStash(randomBytes(32), uid, stashText),
      },
    },
    spec: { targetDeployment: 'web', threshold: 0.5, action: 'restart_pod' },
  };
  const notLoaded = new RegExp(
    `it needs the conversion stash key .*conversion key not loaded yet from Secret ${namespace}/unreadable: Secret ${namespace}/unreadable has no conversion-key of at least 32 bytes; retrying every 0\\.2 s$`,
  );
  for (const [object, desired] of [
    [writesStash, 'aiops.example.com/v1'],
    [verifiesStash, 'aiops.example.com/v2'],
  ] as const) {
    const r = await review(server.port, cert.caPem, object, desired);
    assert.equal(r.result.status, 'Failure', `${object.apiVersion} → ${desired} needs the key`);
    assert.match(r.result.message ?? '', notLoaded);
    assert.equal(r.convertedObjects, undefined, 'nothing signed with a key of this process');
  }
  const plain = await review(server.port, cert.caPem, { ...writesStash, spec }, 'aiops.example.com/v1');
  assert.equal(plain.result.status, 'Success', 'a review that needs no stash still converts');
  assert.equal(plain.convertedObjects?.[0]?.metadata.annotations, undefined);
  assert.match(
    await server.metrics.registry.metrics(),
    /aiops_conversion_failures_total\{reason="stash_key_unavailable"\} 2/,
  );

  const key = randomBytes(32);
  const current = await secrets.get(namespace, 'unreadable');
  await secrets.replace(namespace, 'unreadable', {
    ...current,
    data: { [KEY_DATA]: key.toString('base64') },
  });
  let converted: Answer | undefined;
  for (let i = 0; i < 100; i++) {
    converted = await review(server.port, cert.caPem, writesStash, 'aiops.example.com/v1');
    if (converted.result.status === 'Success') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(converted?.result.status, 'Success', 'the key is read at a retry');
  const annotations = converted.convertedObjects?.[0]?.metadata.annotations ?? {};
  const text = annotations[CONVERSION_ANNOTATION];
  assert.ok(text !== undefined, 'the down-conversion stashes what v1 cannot say');
  assert.equal(
    annotations[CONVERSION_MAC_ANNOTATION],
    signStash(key, uid, text),
    "signed with the Secret's key",
  );
});
