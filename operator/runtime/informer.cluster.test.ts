// The informer's cache: what it keeps of each object (slimMetadata, a table test) and, on
// the harness apiserver, that a list in many pages and the watch after it keep the cache
// equal to the cluster (objects outside the label selector never enter it); that an object
// over maxObjectCharge after the transform is refused (never cached, an earlier version
// dropped with a delete callback) and the cache's heap charge follows what it holds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import type { ObjectMeta } from '../../api/schema/common.ts';
import { freshNamespace, testTransport } from '../../test/support/cluster.ts';
import { scratchCRD } from '../../test/support/scratch-crd.ts';
import { eventually } from '../../test/support/operator.ts';
import { entryCharge, FAILING_AFTER, Informer, LAST_APPLIED_ANNOTATION, slimMetadata } from './informer.ts';
import { trimMetadata } from './trim.ts';

interface ConfigMap {
  metadata: ObjectMeta;
  data?: Record<string, string>;
}

test('slimMetadata drops managedFields and the last-applied annotation, nothing else', () => {
  const cases: { name: string; meta: ObjectMeta; want: ObjectMeta }[] = [
    { name: 'plain object', meta: { name: 'a' }, want: { name: 'a' } },
    {
      name: 'managedFields',
      meta: { name: 'a', managedFields: [{ manager: 'kubectl' }] },
      want: { name: 'a' },
    },
    {
      name: 'only the last-applied annotation',
      meta: { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":"json"}' } },
      want: { name: 'a' },
    },
    {
      name: 'other annotations stay',
      meta: { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{}', 'x.example.com/keep': 'yes' } },
      want: { name: 'a', annotations: { 'x.example.com/keep': 'yes' } },
    },
    {
      name: 'labels, finalizers and versions stay',
      meta: { name: 'a', labels: { app: 'web' }, finalizers: ['f'], resourceVersion: '7', generation: 2 },
      want: { name: 'a', labels: { app: 'web' }, finalizers: ['f'], resourceVersion: '7', generation: 2 },
    },
  ];
  for (const c of cases) assert.deepEqual(slimMetadata({ metadata: c.meta }).metadata, c.want, c.name);
});

test('a list in pages and the watch after it keep the cache equal to the selected objects', async (t) => {
  const ns = await freshNamespace('informer', (fn) => t.after(fn));
  const maps = new ResourceClient<ConfigMap>(await testTransport(), {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    namespaced: true,
  });
  const names = ['a', 'b', 'c', 'd', 'e'];
  const labels = { set: 'informer' };
  for (const name of names)
    await maps.create(ns, {
      metadata: { name, labels, annotations: { [LAST_APPLIED_ANNOTATION]: '{}', keep: name } },
      data: { v: name },
    });
  const informer = new Informer(maps, { namespace: ns, labelSelector: 'set=informer', pageSize: 2 });
  t.after(() => informer.stop());
  await informer.start();
  assert.deepEqual(
    informer
      .list()
      .map((m) => m.metadata.name)
      .sort(),
    names,
  );
  for (const m of informer.list()) {
    assert.equal(m.metadata.managedFields, undefined);
    assert.deepEqual(m.metadata.annotations, { keep: m.metadata.name });
  }
  assert.equal(informer.relists, 1);

  await maps.delete(ns, 'a');
  await maps.create(ns, { metadata: { name: 'f', labels }, data: { v: 'f' } });
  await maps.patch(ns, 'b', { data: { v: 'changed' } });
  await eventually('the watch to catch up', () =>
    Promise.resolve(
      informer.get(`${ns}/a`) === undefined &&
        informer.get(`${ns}/f`) !== undefined &&
        informer.get(`${ns}/b`)?.data?.['v'] === 'changed'
        ? true
        : undefined,
    ),
  );
  assert.equal(informer.size, 5);
});

test('an object over maxObjectCharge after the transform is refused; the charge follows the cache', async (t) => {
  const ns = await freshNamespace('informer-bound', (fn) => t.after(fn));
  const maps = new ResourceClient<ConfigMap>(await testTransport(), {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    namespaced: true,
  });
  // The transform drops a 3 KiB annotation (kept under the bound), not a 3 KiB data value.
  const big = 'x'.repeat(3 * 1024);
  const labels = { set: 'bound' };
  await maps.create(ns, {
    metadata: { name: 'small', labels, annotations: { blob: big } },
    data: { v: 's' },
  });
  await maps.create(ns, { metadata: { name: 'large', labels }, data: { v: big } });
  const refused: string[] = [];
  const deleted: string[] = [];
  const informer = new Informer(maps, {
    namespace: ns,
    labelSelector: 'set=bound',
    transform: (m) => ({ metadata: trimMetadata(m.metadata), ...(m.data ? { data: m.data } : {}) }),
    maxObjectCharge: 4096,
    onRefused: (m, charge) => {
      assert.ok(charge > 4096);
      refused.push(m.metadata.name ?? '');
    },
  });
  informer.on({ delete: (m) => deleted.push(m.metadata.name ?? '') });
  t.after(() => informer.stop());
  await informer.start();
  const bytesOfCache = (): number => informer.list().reduce((n, m) => n + entryCharge(m, {}), 0);
  assert.deepEqual(
    informer.list().map((m) => m.metadata.name),
    ['small'],
  );
  assert.deepEqual(refused, ['large']);
  assert.equal(informer.refused, 1);
  assert.equal(informer.bytes, bytesOfCache());
  assert.ok(informer.bytes < 4096, `${informer.bytes} bytes charged`);

  await maps.patch(ns, 'large', { data: { v: 'now small' } });
  await eventually('the shrunk object to be cached', () =>
    Promise.resolve(informer.get(`${ns}/large`)?.data?.['v'] === 'now small' ? true : undefined),
  );
  assert.equal(informer.bytes, bytesOfCache());
  await maps.patch(ns, 'small', { data: { v: big } });
  await eventually('the grown object to be dropped', () =>
    Promise.resolve(informer.get(`${ns}/small`) === undefined ? true : undefined),
  );
  assert.deepEqual(deleted, ['small']);
  assert.deepEqual(refused, ['large', 'small']);
  assert.equal(informer.bytes, bytesOfCache());
  await maps.delete(ns, 'large');
  await eventually('the delete', () => Promise.resolve(informer.size === 0 ? true : undefined));
  assert.equal(informer.bytes, 0);
});

test('a list+watch failing three times in a row reports why (what Degraded shows), not before', async (t) => {
  const missing = new ResourceClient<ConfigMap>(await testTransport(), {
    group: 'nowhere.aiops.example.com',
    version: 'v1',
    plural: 'things',
    namespaced: true,
  });
  // What `failing` says right after each failure: the microtask runs once the informer has
  // finished handling the error that onError reports (before its backoff sleep ends).
  const after: (string | undefined)[] = [];
  const inARow: number[] = [];
  const informer = new Informer(missing, {
    backoffBaseMs: 50,
    backoffMaxMs: 100,
    onError: (_err, failuresInARow) => {
      inARow.push(failuresInARow);
      queueMicrotask(() => after.push(informer.failing));
    },
  });
  void informer.start();
  t.after(() => informer.stop());
  await eventually('four failures', () => Promise.resolve(after.length >= 4 ? true : undefined));
  assert.deepEqual(inARow.slice(0, 4), [1, 2, 3, 4], 'onError counts the failures in a row');
  assert.equal(FAILING_AFTER, 3);
  assert.deepEqual(after.slice(0, 2), [undefined, undefined], 'one or two failures are not a failing watch');
  assert.match(after[2] ?? 'not failing after three failures', /404|not found/i);
  assert.equal(informer.synced, false);
});

test('a failing list+watch stops reporting failing as soon as a watch is accepted, without waiting for an event', async (t) => {
  const group = `recovers-${Date.now().toString(36)}.aiops.example.com`;
  const transport = await testTransport();
  const crds = new ResourceClient<object>(transport, CRD_RESOURCE);
  const widgets = new ResourceClient<ConfigMap>(transport, {
    group,
    version: 'v1',
    plural: 'widgets',
    namespaced: true,
  });
  const informer = new Informer(widgets, { backoffBaseMs: 50, backoffMaxMs: 100 });
  void informer.start();
  t.after(() => informer.stop());
  await eventually('the informer to report failing', () => Promise.resolve(informer.failing));
  await crds.create(undefined, scratchCRD(group));
  t.after(() => crds.delete(undefined, `widgets.${group}`));
  // No object of the new kind exists, so the watch carries no event (bookmarks come about a
  // minute apart): only the accepted watch can clear it within the 40 s.
  await eventually(
    'the informer to stop reporting failing',
    () => Promise.resolve(informer.synced && informer.failing === undefined ? true : undefined),
    40_000,
  );
});

test('a resource not served yet is waited for quietly: onNotServed once, no error while unserved, synced soon after its CRD', async (t) => {
  const group = `later-${Date.now().toString(36)}.aiops.example.com`;
  const transport = await testTransport();
  const crds = new ResourceClient<object>(transport, CRD_RESOURCE);
  /** Counts the informer's lists, so the quiet tries are seen to have happened. */
  class CountingClient extends ResourceClient<ConfigMap> {
    lists = 0;
    override list(
      ...args: Parameters<ResourceClient<ConfigMap>['list']>
    ): ReturnType<ResourceClient<ConfigMap>['list']> {
      this.lists++;
      return super.list(...args);
    }
  }
  const widgets = new CountingClient(transport, {
    group,
    version: 'v1',
    plural: 'widgets',
    namespaced: true,
  });
  const errors: { err: unknown; failuresInARow: number }[] = [];
  const notServed: unknown[] = [];
  const informer = new Informer(widgets, {
    backoffBaseMs: 50,
    backoffMaxMs: 100,
    onError: (err, failuresInARow) => errors.push({ err, failuresInARow }),
    onNotServed: (err) => notServed.push(err),
  });
  void informer.start();
  t.after(() => informer.stop());
  await eventually('four lists of the unserved resource', () =>
    Promise.resolve(widgets.lists >= 4 ? true : undefined),
  );
  assert.equal(notServed.length, 1, 'reported once, not at every try');
  assert.match(String(notServed[0]), /404|not found/i);
  assert.equal(errors.length, 0, 'a resource not served yet is not an error');
  assert.equal(informer.synced, false);
  await crds.create(undefined, scratchCRD(group));
  t.after(() => crds.delete(undefined, `widgets.${group}`));
  const created = Date.now();
  await eventually('the informer to sync once the CRD is served', () =>
    Promise.resolve(informer.synced ? true : undefined),
  );
  assert.ok(Date.now() - created < 10_000, `synced ${Date.now() - created} ms after the CRD`);
  // The new CRD's storage may answer 429 "storage is (re)initializing" for a moment: a
  // transient failure, never one that reaches FAILING_AFTER (what the operator reports).
  assert.deepEqual(
    errors.filter((e) => e.failuresInARow >= FAILING_AFTER),
    [],
    'no failure in a row long enough to be reported',
  );
  assert.equal(notServed.length, 1);
});
