// The controller's work queue and its retry rate limiter: de-duplication, one hand-out per
// key at a time, delayed adds (never early, the earliest winning), and backoff pacing.

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

test('rate limiter: the overall bucket paces retries after the burst', () => {
  let now = 0;
  const r = new RateLimiter({ qps: 10, burst: 2, now: () => now });
  assert.equal(r.when('a'), 5);
  assert.equal(r.when('b'), 5);
  assert.equal(r.when('c'), 100);
  now = 1000;
  assert.equal(r.when('d'), 5);
});
