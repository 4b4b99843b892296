import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CORDONED_BY_ANNOTATION, type MarkedNode } from '../../api/cordon.ts';
import { APISERVER_MAX_OBJECT_BYTES, DEFAULT_PAGE_BYTES } from '../../lib/kube/resources.ts';
import { NODE_PAGE_SIZE, NodeSnapshots, type NodePage } from './node-snapshots.ts';

/** A fake node LIST of `count` nodes paged by the limit asked for; counts pages and lists. */
function cluster(count: number) {
  const nodes: MarkedNode[] = Array.from({ length: count }, (_, i) => ({
    metadata: {
      name: `n${i}`,
      resourceVersion: String(i),
      annotations: { [CORDONED_BY_ANNOTATION]: `t${i % 3}` },
    },
    spec: { unschedulable: i % 2 === 0 },
  }));
  const seen = { pages: 0, firstPages: 0 };
  const page = (token: string | undefined, limit: number): Promise<NodePage> => {
    seen.pages++;
    if (token === undefined) seen.firstPages++;
    const from = token === undefined ? 0 : Number(token);
    const to = Math.min(nodes.length, from + limit);
    return Promise.resolve({
      items: nodes.slice(from, to),
      metadata: to < nodes.length ? { continue: String(to) } : {},
    });
  };
  return { nodes, seen, page };
}

test('a page of nodes each as large as etcd stores fits the default page budget', () => {
  assert.ok(NODE_PAGE_SIZE >= 1 && NODE_PAGE_SIZE * APISERVER_MAX_OBJECT_BYTES <= DEFAULT_PAGE_BYTES);
});

test('NodeSnapshots: every page is read and reduced; within maxAge every reader shares one list', async () => {
  const c = cluster(NODE_PAGE_SIZE * 2 + 7);
  let clock = 1_000_000;
  const s = new NodeSnapshots({ page: c.page, maxAgeMs: 10_000, now: () => clock });
  const [a, b] = await Promise.all([s.read(), s.read()]);
  assert.equal(a.length, c.nodes.length);
  assert.equal(a, b, 'readers joining a list under way get its answer');
  assert.equal(c.seen.pages, 3);
  assert.deepEqual(a[4], {
    name: 'n4',
    resourceVersion: '4',
    unschedulable: true,
    mark: { uid: 't1' },
    held: false,
  });
  clock += 9_999;
  await s.read();
  assert.equal(c.seen.firstPages, 1, 'reused while younger than maxAge');
  clock += 1;
  await s.read();
  assert.equal(c.seen.firstPages, 2, 'listed again once maxAge passed');
});

test('NodeSnapshots: invalidate() makes the next read list, and a list begun before it is not kept', async () => {
  const c = cluster(3);
  const s = new NodeSnapshots({ page: c.page, now: () => 0 });
  const before = s.read();
  s.invalidate();
  await before;
  await s.read();
  assert.equal(c.seen.firstPages, 2, 'the list begun before the patch does not serve later readers');
  await s.read();
  assert.equal(c.seen.firstPages, 2);
  s.invalidate();
  await s.fresh();
  await s.fresh();
  assert.equal(c.seen.firstPages, 4, 'fresh() never reuses a kept list');
});

test('NodeSnapshots: readSince reuses only a list begun at or after the moment asked for', async () => {
  const c = cluster(2);
  let clock = 100;
  const s = new NodeSnapshots({ page: c.page, now: () => clock });
  await s.read();
  clock = 200;
  await s.readSince(100);
  assert.equal(c.seen.firstPages, 1);
  await s.readSince(150);
  assert.equal(c.seen.firstPages, 2);
  await Promise.all([s.readSince(200), s.readSince(190), s.read()]);
  assert.equal(c.seen.firstPages, 2);
});

test('NodeSnapshots: a failed list rejects its readers, is not kept, and the next read lists again', async () => {
  let fail = true;
  let calls = 0;
  const s = new NodeSnapshots({
    page: () => {
      calls++;
      return fail ? Promise.reject(new Error('boom')) : Promise.resolve({ items: [], metadata: {} });
    },
    now: () => 0,
  });
  await assert.rejects(Promise.all([s.read(), s.read()]), /boom/);
  assert.equal(calls, 1);
  fail = false;
  assert.deepEqual(await s.read(), []);
  assert.equal(calls, 2);
});

test('NodeSnapshots (property): lists begun never exceed one per maxAge window plus invalidations, however many reads', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof(fc.constant<'inv'>('inv'), fc.nat(5_000)), { maxLength: 60 }),
      async (steps) => {
        const c = cluster(1);
        let clock = 0;
        const s = new NodeSnapshots({ page: c.page, maxAgeMs: 10_000, now: () => clock });
        let invalidations = 0;
        for (const step of steps) {
          if (step === 'inv') {
            s.invalidate();
            invalidations++;
          } else {
            clock += step;
            await Promise.all([s.read(), s.read(), s.read()]);
          }
        }
        assert.ok(s.lists <= Math.floor(clock / 10_000) + 1 + invalidations, `${s.lists} lists`);
      },
    ),
  );
});
