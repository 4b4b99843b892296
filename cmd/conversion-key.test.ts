// The conversion stash key Secret on the real apiserver: the first call creates it, every
// later call (and every replica racing for it) gets the same key, the key joins a Secret
// that already holds the self-signed certificate without touching it and survives the
// certificate's renewal, and a Secret that holds no usable key is an error, never silently
// replaced.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResourceClient } from '../api/kube/resources.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { ensureConversionKey, KEY_DATA } from './conversion-key.ts';

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
