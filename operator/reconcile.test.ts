// The bounds reconcile puts on calls that hold a worker: the tenant's LLM timeout capped by
// --llm-max-timeout (preflight.ts), and a deadline after which the worker stops waiting for
// a call (lib/deadline.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withDeadline } from '../lib/deadline.ts';
import { boundLLMTimeout } from './preflight.ts';

test('boundLLMTimeout: the lower of the task timeout and the cap; unset is the cap', () => {
  const table: [number | undefined, number, number][] = [
    [120, 10_000, 10],
    [5, 10_000, 5],
    [10, 10_000, 10],
    [undefined, 10_000, 10],
    [undefined, 2_500, 2.5],
    [30, 60_000, 30],
  ];
  for (const [own, maxMs, want] of table) {
    const llm = { endpoint: 'http://llm.example/v1', ...(own !== undefined ? { timeoutSeconds: own } : {}) };
    assert.equal(boundLLMTimeout(llm, maxMs).timeoutSeconds, want, `${own} s capped at ${maxMs} ms`);
    assert.equal(boundLLMTimeout(llm, maxMs).endpoint, llm.endpoint);
  }
});

test('withDeadline: a call that never answers yields the late value once the deadline passes', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let settled: string | undefined;
  void withDeadline(new Promise<string>(() => undefined), 6_000, () => 'late').then((v) => (settled = v));
  t.mock.timers.tick(5_999);
  await Promise.resolve();
  assert.equal(settled, undefined, 'still waiting before the deadline');
  t.mock.timers.tick(1);
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, 'late');
});

test('withDeadline: an answer in time wins, a rejection is passed on', async () => {
  assert.equal(await withDeadline(Promise.resolve('ok'), 1_000, () => 'late'), 'ok');
  await assert.rejects(
    withDeadline(Promise.reject(new Error('boom')), 1_000, () => 'late'),
    /boom/,
  );
});
