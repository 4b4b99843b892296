import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter } from './ratelimit.ts';
import { WorkQueue } from './workqueue.ts';

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
  q.addAfter('a', 5000);
  q.addAfter('a', 10);
  const t0 = Date.now();
  assert.equal(await q.get(), 'a');
  assert.ok(Date.now() - t0 < 4000);
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

test('rate limiter: the overall bucket paces retries after the burst', () => {
  let now = 0;
  const r = new RateLimiter({ qps: 10, burst: 2, now: () => now });
  assert.equal(r.when('a'), 5);
  assert.equal(r.when('b'), 5);
  assert.equal(r.when('c'), 100);
  now = 1000;
  assert.equal(r.when('d'), 5);
});
