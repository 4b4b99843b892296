// The controller's work queue and its retry rate limiter: de-duplication, one hand-out per
// key at a time, delayed adds (never early, the earliest winning), and backoff pacing.

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { RateLimiter } from './ratelimit.ts';
import fc from 'fast-check';
import { NamespaceBuckets } from './namespace-buckets.ts';
import { fairShare, WorkQueue } from './workqueue.ts';

test('keys are de-duplicated and never handed out twice at once', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('a');
  q.add('b');
  assert.equal(q.depth, 2);
  const k = await q.get();
  assert.equal(k, 'a');
  q.add('a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.depth, 0, 'a is in flight, its re-add waits');
  q.done('a');
  assert.equal(await q.get(), 'a');
  q.done('a');
  q.done('b');
  q.shutDown();
  assert.equal(await q.get(), undefined);
});

test('addAfter delays; the earliest pending delay wins', async () => {
  const q = new WorkQueue();
  const t0 = performance.now();
  q.addAfter('a', 5000);
  q.addAfter('a', 200);
  assert.equal(q.depth, 0, 'nothing is queued before the delay');
  assert.equal(await q.get(), 'a');
  const waited = performance.now() - t0;
  // Timers start from the event loop's cached clock, which can lag a few ms behind t0.
  assert.ok(waited >= 190, `handed out after ${waited.toFixed(0)} ms, before the 200 ms delay`);
  assert.ok(waited < 4000, `handed out after ${waited.toFixed(0)} ms: the 5 s delay won`);
  q.shutDown();
});

test('rate limiter: per-key exponential 5 ms → 1000 s, forget resets', () => {
  const r = new RateLimiter({ qps: 1e9, burst: 1e9 });
  const delays = Array.from({ length: 20 }, () => r.when('k'));
  assert.deepEqual(delays.slice(0, 4), [5, 10, 20, 40]);
  assert.equal(delays.at(-1), 1_000_000);
  r.forget('k');
  assert.equal(r.when('k'), 5);
});

test('rate limiter: a namespace’s bucket paces its own retries after its burst, never another’s', () => {
  let now = 0;
  const r = new RateLimiter({ qps: 100, burst: 100, namespaceQps: 10, namespaceBurst: 2, now: () => now });
  assert.equal(r.when('a/x'), 5);
  assert.equal(r.when('a/y'), 5);
  assert.equal(r.when('a/z'), 100);
  for (let i = 0; i < 1000; i++) r.when(`a/k${i}`);
  assert.ok(r.when('a/last') > 100_000, 'namespace a is a hundred seconds in debt');
  assert.equal(r.when('b/x'), 5, 'namespace b waits only its backoff');
  now = 1_000_000;
  assert.equal(r.when('a/w'), 5);
});

test('rate limiter: the overall bucket is taken as retries come due, never reserved ahead', () => {
  let now = 0;
  const r = new RateLimiter({ qps: 10, burst: 2, now: () => now });
  assert.equal(r.admit(), 0);
  assert.equal(r.admit(), 0);
  assert.equal(r.admit(), 100, 'spent: wait a tenth of a second');
  assert.equal(r.admit(), 100, 'asking again took nothing');
  now = 100;
  assert.equal(r.admit(), 0);
  assert.equal(r.admit(), 100);
});

test('rate limiter: one namespace gets a fifth of the overall rate and burst by default', () => {
  const now = 0;
  const r = new RateLimiter({ qps: 10, burst: 100, now: () => now });
  const waits = Array.from({ length: 22 }, (_, i) => r.when(`a/k${i}`));
  assert.deepEqual(
    waits.slice(0, 20),
    Array.from({ length: 20 }, () => 5),
    'a burst of 20',
  );
  assert.deepEqual(waits.slice(20), [500, 1000], 'then 2 a second');
});

test('retries: 300 failing keys of one namespace do not delay the retry of another namespace’s key', async () => {
  const q = new WorkQueue({
    limiter: new RateLimiter({ qps: 1000, burst: 1000, namespaceQps: 1, namespaceBurst: 1 }),
  });
  for (let i = 0; i < 300; i++) q.addRateLimited(`a/k${i}`);
  q.addRateLimited('b/k');
  const first = [await q.get(), await q.get()];
  assert.ok(first.includes('b/k'), `b's retry among the first two handed out: ${first.join(', ')}`);
  q.shutDown();
});

test('fair: one key of namespace b behind 1,000 of namespace a is handed out within the first 2 gets', async () => {
  const q = new WorkQueue();
  for (let i = 0; i < 1000; i++) q.add(`a/t${i}`);
  q.add('b/t0');
  assert.equal(q.depth, 1001);
  const first = [await q.get(), await q.get()];
  assert.ok(first.includes('b/t0'), `first two: ${first.join(', ')}`);
  assert.deepEqual(first, ['a/t0', 'b/t0'], 'namespaces in turn, each FIFO');
  assert.equal(await q.get(), 'a/t1');
  q.shutDown();
});

test('fair (property): no key is lost or handed out twice; the depth is what is owed; each namespace FIFO; over its share only when every waiting namespace holds its share', async () => {
  const key = fc.tuple(fc.constantFrom('a', 'b', 'c', ''), fc.integer({ min: 0, max: 5 }));
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          fc.tuple(fc.constant('add' as const), key),
          fc.constant(['get'] as const),
          fc.tuple(fc.constant('done' as const), fc.nat()),
        ),
        {
          maxLength: 200,
        },
      ),
      async (ops) => {
        const q = new WorkQueue();
        q.setWorkers(3);
        const owed: string[] = [];
        const processing: string[] = [];
        const redo = new Set<string>();
        const nsOf = (k: string): string => k.slice(0, k.indexOf('/'));
        const held = (ns: string): number => processing.filter((p) => nsOf(p) === ns).length;
        const take = async (): Promise<void> => {
          const busy = new Set([...owed, ...processing].map(nsOf));
          const share = fairShare(3, busy.size);
          const k = await q.get();
          assert.ok(k !== undefined);
          const at = owed.indexOf(k);
          assert.ok(at >= 0, `${k} handed out without being owed`);
          const ns = nsOf(k);
          if (held(ns) >= share)
            for (const other of owed.map(nsOf))
              assert.ok(
                held(other) >= share,
                `${ns} holding ${held(ns)} (share ${share}) served while ${other} holds ${held(other)}`,
              );
          assert.equal(
            owed.find((o) => o.startsWith(`${ns}/`)),
            k,
            'oldest of its namespace first',
          );
          assert.ok(!processing.includes(k), `${k} on two workers`);
          owed.splice(at, 1);
          processing.push(k);
        };
        for (const op of ops) {
          if (op[0] === 'add') {
            const k = `${op[1][0]}/t${op[1][1]}`;
            q.add(k);
            if (processing.includes(k)) redo.add(k);
            else if (!owed.includes(k)) owed.push(k);
          } else if (op[0] === 'get') {
            if (q.depth > 0) await take();
          } else if (processing.length > 0) {
            const [k = ''] = processing.splice(op[1] % processing.length, 1);
            q.done(k);
            if (redo.delete(k)) owed.push(k);
          }
          assert.equal(q.depth, owed.length);
        }
        for (const k of processing.splice(0)) {
          q.done(k);
          if (redo.delete(k)) owed.push(k);
        }
        while (q.depth > 0) await take();
        assert.deepEqual(owed, [], 'every owed key was handed out');
        q.shutDown();
      },
    ),
  );
});

test('fair share: a namespace holding its share of the workers waits while another has keys; alone it may use them all', async () => {
  const q = new WorkQueue();
  q.setWorkers(4);
  for (let i = 0; i < 10; i++) q.add(`a/t${i}`);
  const held = [await q.get(), await q.get(), await q.get(), await q.get()];
  assert.deepEqual(held, ['a/t0', 'a/t1', 'a/t2', 'a/t3'], 'no one else waits: a takes every worker');
  q.add('b/t0');
  q.add('b/t1');
  q.add('b/t2');
  q.done('a/t0');
  assert.equal(await q.get(), 'b/t0', 'a holds 3 of 4, over its share of 2: the freed worker goes to b');
  q.done('a/t1');
  assert.equal(await q.get(), 'b/t1', 'a holds 2, b 1: b is under its share');
  q.done('a/t2');
  assert.equal(await q.get(), 'a/t4', 'a holds 1, b 2: a is under its share again');
  q.done('b/t0');
  assert.equal(await q.get(), 'b/t2', 'each holds 2: b next in turn');
  q.done('b/t1');
  q.done('b/t2');
  assert.equal(await q.get(), 'a/t5', 'b has nothing waiting: a may take what b freed');
  assert.equal(await q.get(), 'a/t6');
  q.shutDown();
});

test('fair share: when every namespace with keys holds its share, a worker still gets the key of the one holding fewest', async () => {
  const q = new WorkQueue();
  q.setWorkers(8);
  for (const ns of ['a', 'b']) for (let i = 0; i < 5; i++) q.add(`${ns}/t${i}`);
  q.add('c/t0');
  const first = await Promise.all(Array.from({ length: 7 }, () => q.get()));
  assert.deepEqual(
    first.map((k) => k?.slice(0, 1)).sort(),
    ['a', 'a', 'a', 'b', 'b', 'b', 'c'],
    'share ceil(8 / 3) = 3 each',
  );
  q.done('a/t0');
  assert.equal(await q.get(), 'a/t3', 'a holds 2 of its 3: its turn');
  assert.equal(
    await q.get(),
    'b/t3',
    'a and b hold their 3 each; c (1, nothing waiting) is busy: no worker idles',
  );
  q.shutDown();
});

test('fairShare: the workers shared among the busy namespaces, rounded up, at least 1', () => {
  assert.deepEqual(
    [fairShare(4, 1), fairShare(4, 2), fairShare(4, 3), fairShare(4, 8), fairShare(1, 0)],
    [4, 2, 2, 1, 1],
  );
});

test("addEvent charged to another namespace spends that namespace's bucket, never the key's own", () => {
  const now = 0;
  const q = new WorkQueue({ namespaceQps: 1, namespaceBurst: 1, now: () => now });
  q.addEvent('a/x', 'm');
  assert.equal(q.depth, 1, "m's one token queues a's key at once");
  q.addEvent('a/y', 'm');
  assert.equal(q.depth, 1, "m's bucket is spent: a/y waits for m's next token");
  q.addEvent('a/z');
  assert.equal(q.depth, 2, "a's own bucket is untouched by what m's events caused");
  q.addEvent('m/w');
  assert.equal(q.depth, 2, "m's own key waits behind the token a/y took");
  q.shutDown();
});

test('namespace buckets: burst at once, then one token per 1/qps; an idle namespace is full again', () => {
  let now = 0;
  const b = new NamespaceBuckets(5, 3, () => now);
  assert.deepEqual([b.reserve('a'), b.reserve('a'), b.reserve('a')], [0, 0, 0]);
  assert.equal(b.wait('a'), 200);
  assert.equal(b.reserve('a'), 200);
  assert.equal(b.reserve('a'), 400);
  assert.equal(b.reserve('b'), 0, 'another namespace has its own bucket');
  now = 10_000;
  assert.equal(b.wait('a'), 0);
  assert.deepEqual([b.reserve('a'), b.reserve('a'), b.reserve('a'), b.reserve('a')], [0, 0, 0, 200]);
});

/** Runs `patches` event adds from namespace a, 10 ms apart, with a worker draining the queue in between. */
async function patchLoop(
  t: TestContext,
  keys: number,
  patches: number,
): Promise<{ a: number; bAfter: number | undefined; elapsedMs: number }> {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  const q = new WorkQueue({ namespaceQps: 5, namespaceBurst: 20 });
  let a = 0;
  let bAfter: number | undefined;
  let gets = 0;
  const drain = async (): Promise<void> => {
    while (q.depth > 0) {
      const k = await q.get();
      assert.ok(k !== undefined);
      gets += 1;
      if (k.startsWith('a/')) a += 1;
      else bAfter ??= gets;
      q.done(k);
    }
  };
  for (let i = 0; i < patches; i++) {
    q.addEvent(`a/t${i % keys}`);
    if (i === patches / 2) {
      q.addEvent('b/t0');
      gets = 0;
    }
    await drain();
    t.mock.timers.tick(10);
  }
  await drain();
  q.shutDown();
  return { a, bAfter, elapsedMs: patches * 10 };
}

for (const keys of [1, 50])
  test(`patch loop (${keys} AITask${keys > 1 ? 's' : ''}): 200 patches of one namespace reconcile at most burst + qps × elapsed; another namespace's key comes next`, async (t) => {
    const { a, bAfter, elapsedMs } = await patchLoop(t, keys, 200);
    const bound = 20 + 5 * (elapsedMs / 1000) + 1;
    assert.ok(a <= bound, `${a} reconciles of namespace a, over ${bound}`);
    assert.ok(a >= 20, `${a} reconciles: the burst goes through at once`);
    assert.ok(bAfter !== undefined && bAfter <= 2, `namespace b handed out on get ${bAfter} after its add`);
  });

test('addEvent: a key already queued or due sooner takes no token', () => {
  let now = 0;
  const q = new WorkQueue({ namespaceQps: 1, namespaceBurst: 1, now: () => now });
  q.addEvent('a/x');
  q.addEvent('a/x');
  assert.equal(q.depth, 1);
  now = 1000;
  q.addEvent('a/y');
  assert.equal(q.depth, 2, 'the duplicate took no token: one second refilled one');
  q.shutDown();
});

test('a requeue reports how late its key was taken against the due time; other delays report nothing', async () => {
  let now = 0;
  const late: number[] = [];
  const observer = {
    add() {},
    get() {},
    done() {},
    retry() {},
    shutDown() {},
    late: (s: number) => late.push(s),
  };
  const q = new WorkQueue({ now: () => now, observer });
  q.requeueAfter('a', 1);
  q.addAfter('b', 1);
  const first = await q.get();
  const second = await q.get();
  assert.deepEqual([first, second].sort(), ['a', 'b']);
  assert.equal(late.length, 1, 'only the requeued key reports');
  q.done('a');
  q.done('b');
  q.requeueAfter('a', 1);
  now = 250;
  // Taken by a worker already waiting: the report comes at that hand-out, 250 ms past due at 1.
  const waiting = q.get();
  assert.equal(await waiting, 'a');
  assert.deepEqual(
    late.map((s) => Math.round(s * 1000)),
    [0, 249],
  );
  q.shutDown();
});
