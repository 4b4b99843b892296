// The conversion stash through the real apiserver and the real webhook, written as a
// tenant can: a forged stash (an out-of-bounds value, prototype paths, a 5,000-segment
// path, text that is not JSON) is ignored, so nothing it says reaches storage or a read,
// and LISTs at every version keep working for everyone in the namespace. A stash the
// webhook signed for one object does nothing on another. And the uid the MAC rests on:
// the apiserver assigns it before it converts a create, so a stash written then is bound
// to the object's own uid and reads back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshNamespace, testAITasks } from '../support/cluster.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../../api/install.ts';

const G = 'aiops.example.com';
const FORGED_MAC = `hmac-sha256::${Buffer.alloc(32).toString('base64url')}`;

const v2Spec = {
  target: { kind: 'Deployment' as const, name: 'web' },
  trigger: { threshold: 0.5 },
  remediation: { action: 'Noop' as const },
};

test("a tenant's forged stash is ignored and LISTs at every version still work", async (t) => {
  const ns = await freshNamespace('conv-stash', t.after.bind(t));
  const [a, b, c] = [await testAITasks('v1alpha1'), await testAITasks('v1'), await testAITasks('v2')];
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { name: 'bystander' },
    spec: v2Spec,
  });
  const v1Spec = { targetDeployment: 'web', threshold: 0.5, action: 'noop' as const, intervalSeconds: 60 };
  const forged = (name: string, stash: string) => ({
    apiVersion: `${G}/v1` as const,
    kind: 'AITask' as const,
    metadata: {
      name,
      annotations: { [CONVERSION_ANNOTATION]: stash, [CONVERSION_MAC_ANNOTATION]: FORGED_MAC },
    },
    spec: v1Spec,
  });

  await b.create(
    ns,
    forged('zero-interval', JSON.stringify({ v2: [{ p: ['spec', 'intervalSeconds'], v: 0, b: 60 }] })),
  );
  assert.equal((await c.get(ns, 'zero-interval')).spec.intervalSeconds, 60, 'v2 keeps its bounds');

  await b.create(
    ns,
    forged(
      'prototype',
      JSON.stringify({
        v2: [
          { p: ['__proto__', 'paused'], v: true },
          { p: ['spec', 'constructor', 'x'], v: 1 },
        ],
      }),
    ),
  );
  assert.equal((await c.get(ns, 'prototype')).spec.paused, undefined);

  await b.create(ns, forged('not-json', '{"v2": ['));
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: {
      name: 'deep-path',
      annotations: {
        [CONVERSION_ANNOTATION]: JSON.stringify({
          v1: [{ p: ['spec', ...Array<string>(5000).fill('a')], v: 1 }],
        }),
        [CONVERSION_MAC_ANNOTATION]: FORGED_MAC,
      },
    },
    spec: v2Spec,
  });

  const names = ['bystander', 'deep-path', 'not-json', 'prototype', 'zero-interval'];
  for (const client of [a, b, c]) {
    const list = await client.listAll(ns);
    assert.deepEqual(list.items.map((o) => o.metadata.name).sort(), names, `LIST at ${client.version}`);
  }
  assert.equal((await b.get(ns, 'deep-path')).spec.targetDeployment, 'web', 'GET at v1 of the deep path');
  assert.equal((await a.get(ns, 'bystander')).spec.target, 'web');
});

test('a stash the webhook signed for one object does nothing on another', async (t) => {
  const ns = await freshNamespace('conv-stash-uid', t.after.bind(t));
  const [b, c] = [await testAITasks('v1'), await testAITasks('v2')];
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { name: 'donor' },
    spec: { ...v2Spec, paused: true, dryRun: true, approval: 'Manual' },
  });
  await c.create(ns, { apiVersion: `${G}/v2`, kind: 'AITask', metadata: { name: 'victim' }, spec: v2Spec });
  const donor = await b.get(ns, 'donor');
  const annotations = donor.metadata.annotations ?? {};
  assert.ok(
    annotations[CONVERSION_MAC_ANNOTATION]?.includes(`:${donor.metadata.uid ?? '?'}:`),
    'bound to its uid',
  );

  await b.patch(ns, 'victim', {
    metadata: {
      annotations: {
        [CONVERSION_ANNOTATION]: annotations[CONVERSION_ANNOTATION],
        [CONVERSION_MAC_ANNOTATION]: annotations[CONVERSION_MAC_ANNOTATION],
      },
    },
  });
  const victim = await c.get(ns, 'victim');
  assert.deepEqual(
    [victim.spec.paused, victim.spec.dryRun, victim.spec.approval],
    [undefined, undefined, undefined],
    "the donor's v2-only fields did not move over",
  );
  const back = await b.replace(ns, 'donor', { ...donor, spec: { ...donor.spec, threshold: 0.7 } });
  assert.equal(back.spec.threshold, 0.7);
  const kept = await c.get(ns, 'donor');
  assert.deepEqual(
    [kept.spec.paused, kept.spec.dryRun, kept.spec.approval],
    [true, true, 'Manual'],
    'its own stash still works for the donor',
  );
});

test('a create converts with the uid in place; the stash it writes reads back', async (t) => {
  const ns = await freshNamespace('conv-stash-create', t.after.bind(t));
  const [a, c] = [await testAITasks('v1alpha1'), await testAITasks('v2')];
  await a.create(ns, {
    apiVersion: `${G}/v1alpha1`,
    kind: 'AITask',
    metadata: { name: 'spelled' },
    spec: { target: 'web', threshold: 10, action: 'Noop', interval: '300s' },
  });
  const stored = await c.get(ns, 'spelled');
  assert.equal(stored.spec.intervalSeconds, 300);
  assert.equal(
    stored.metadata.annotations?.[CONVERSION_MAC_ANNOTATION]?.split(':')[1],
    stored.metadata.uid,
    'the stash written on create is bound to the uid the apiserver assigned',
  );
  assert.equal((await a.get(ns, 'spelled')).spec.interval, '300s');
});
