// AITaskClient's finalizer edits against the real apiserver: addFinalizer given the object
// as last seen (the reconciler passes its cached copy, so the first write needs no GET)
// still ends with the finalizer on the object exactly once, whether that copy is current or
// stale (a conflict makes it read the object again).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FINALIZER } from './install.ts';
import type * as v2 from './schema/v2.ts';
import { freshNamespace, testAITasks } from '../test/support/cluster.ts';

function task(name: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
    },
  };
}

test('addFinalizer with the current object as seen adds the finalizer', async (t) => {
  const ns = await freshNamespace('finalizer-seen', (fn) => t.after(fn));
  const tasks = await testAITasks('v2');
  const created = await tasks.create(ns, task('a'));
  t.after(() => tasks.removeFinalizer(ns, 'a').catch(() => undefined));
  const out = await tasks.addFinalizer(ns, 'a', FINALIZER, created);
  assert.deepEqual(out.metadata.finalizers, [FINALIZER]);
  assert.deepEqual((await tasks.get(ns, 'a')).metadata.finalizers, [FINALIZER]);
});

test('addFinalizer with a stale object as seen reads it again and keeps what changed since', async (t) => {
  const ns = await freshNamespace('finalizer-stale', (fn) => t.after(fn));
  const tasks = await testAITasks('v2');
  const stale = await tasks.create(ns, task('b'));
  t.after(() => tasks.removeFinalizer(ns, 'b').catch(() => undefined));
  await tasks.patch(ns, 'b', { metadata: { finalizers: ['example.com/other'] } });
  const out = await tasks.addFinalizer(ns, 'b', FINALIZER, stale);
  assert.deepEqual(out.metadata.finalizers, ['example.com/other', FINALIZER]);
  await tasks.removeFinalizer(ns, 'b', 'example.com/other');
});
