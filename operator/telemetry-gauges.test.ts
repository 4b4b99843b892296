// The gauges the shipped alerts read at each scrape: aiops_tasks_stalled and
// aiops_llm_circuit_breakers_open report what their readings say, 0 without one, and
// CircuitBreaker.openCount counts breakers open (cooling off or half-open), not closed ones
// nor those whose cool-off is over.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CircuitBreaker } from './llm/policy.ts';
import { createTelemetry } from './telemetry.ts';

async function gauge(text: Promise<string>, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await text);
  return Number(m?.[1]);
}

test('aiops_tasks_stalled and aiops_llm_circuit_breakers_open read their readings at each scrape', async () => {
  let stalled = 2;
  const t = createTelemetry({ stalledTasks: () => stalled, openBreakers: () => 3, remediations: () => 1 });
  assert.equal(await gauge(t.registry.metrics(), 'aiops_tasks_stalled'), 2);
  assert.equal(await gauge(t.registry.metrics(), 'aiops_llm_circuit_breakers_open'), 3);
  assert.equal(await gauge(t.registry.metrics(), 'aiops_remediations_in_flight'), 1);
  stalled = 0;
  assert.equal(await gauge(t.registry.metrics(), 'aiops_tasks_stalled'), 0);
  const none = createTelemetry();
  assert.equal(await gauge(none.registry.metrics(), 'aiops_tasks_stalled'), 0);
  assert.equal(await gauge(none.registry.metrics(), 'aiops_llm_circuit_breakers_open'), 0);
});

test('CircuitBreaker.openCount: open while cooling off and half-open, not closed or cooled off', () => {
  const b = new CircuitBreaker(2, 1000);
  assert.equal(b.openCount(0), 0);
  b.failure('a', 0);
  assert.equal(b.openCount(0), 0, 'one failure of two: closed');
  assert.equal(b.failure('a', 10), true);
  b.failure('b', 10);
  b.failure('b', 10);
  assert.equal(b.openCount(500), 2, 'both cooling off');
  assert.equal(b.openCount(1500), 0, 'cool-off over: a call may go out');
  assert.deepEqual(b.allow('a', 1500), { ok: true });
  assert.equal(b.openCount(1500), 1, "a's trial call is out: half-open");
  b.success('a');
  assert.equal(b.openCount(1500), 0);
});
