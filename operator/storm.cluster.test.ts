// Integration: a remediation storm — 20 AITasks breaching at once against an operator with
// --max-concurrent-remediations=3 and four parallel reconciles. Remediations in flight are
// measured twice: by sampling the operator's aiops_remediations_in_flight gauge, and from the
// Events (each decision to act until the task waits out its cooldown or stalls lies within a
// time it held a slot; a task cooling down holds none). Neither ever exceeds 3; maxAttempts
// and cooldown hold; every refusal has an Event.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import {
  aitask,
  clients,
  GAUGE,
  maxOverlap,
  operatorFor,
  metricsForFile,
  slotIntervals,
  taskEvents,
} from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';
import type { KubeEvent } from './runtime/kinds.ts';

const metrics = metricsForFile();

const TASKS = 20;
const CAP = 3;
const SLOW = new Set([17, 18, 19]);
/**
 * Longer than the 10 s interval by more than the lag of an action's Event behind its decision
 * (the cooldown runs from the decision; up to ~1.1 s under CI load), so a task that ignored
 * its cooldown (re-acting at the next interval) still fails the bound below.
 */
const COOLDOWN_S = 15;

test('storm: 20 breaching AITasks, cap 3 → never more than 3 in flight; maxAttempts, cooldown and refusal Events', async (t) => {
  const ns = await freshNamespace('storm', (fn) => t.after(fn));
  const c = await clients();
  const names = Array.from({ length: TASKS }, (_, i) => `t${i}`);
  for (const name of names) {
    await c.deployments.create(ns, deployment(name, 1));
    metrics.exporter.set(GAUGE, { series: `${ns}-${name}` }, 5);
  }
  await metrics.set(`${ns}-t0`, 5);
  for (const [i, name] of names.entries())
    await c.tasks.create(
      ns,
      aitask(name, name, `${ns}-${name}`, {
        action: 'ScaleUp',
        scale: { maxReplicas: 10 },
        cooldownSeconds: SLOW.has(i) ? COOLDOWN_S : 0,
        maxAttempts: SLOW.has(i) ? 2 : 1,
      }),
    );
  const op = await operatorFor(ns, metrics.prometheus.url, t, [
    `--max-concurrent-remediations=${CAP}`,
    '--max-concurrent-reconciles=4',
  ]);
  let sampled = 0;
  let peak = 0;
  const sampling = new AbortController();
  const sampler = (async () => {
    while (!sampling.signal.aborted) {
      peak = Math.max(peak, await op.metric('aiops_remediations_in_flight'));
      sampled += 1;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await eventually(
    'every AITask to act and stall at maxAttempts',
    async () => {
      const items = (await c.tasks.list(ns)).items;
      return items.length === TASKS && items.every((o) => o.status?.phase === 'Failed') ? true : undefined;
    },
    240_000,
  );
  sampling.abort();
  await sampler;
  assert.ok(sampled > 10);
  assert.ok(peak <= CAP, `the gauge peaked at ${peak}`);

  const events = await taskEvents(ns);
  const of = (name: string, reason: string): KubeEvent[] =>
    events.filter((e) => e.regarding.name === name && e.reason === reason);
  const intervals = names.flatMap((name) => {
    assert.ok(of(name, 'MaxAttemptsReached').length > 0, `${name}: stalled`);
    const held = slotIntervals(events.filter((e) => e.regarding.name === name));
    assert.ok(held.length > 0, `${name}: decided`);
    return held;
  });
  const overlap = maxOverlap(intervals);
  assert.ok(overlap <= CAP, `Events show ${overlap} remediations in flight at once`);
  assert.equal(overlap, CAP, 'the cap was reached, so it was what held the storm back');

  for (const [i, name] of names.entries()) {
    const actions = of(name, 'ScaleUp');
    assert.equal(actions.length, SLOW.has(i) ? 2 : 1, `${name}: maxAttempts respected`);
    assert.equal((await c.deployments.get(ns, name)).spec?.replicas, 1 + actions.length);
    if (SLOW.has(i)) {
      const [a, b] = actions.map((e) => Date.parse(e.eventTime));
      assert.ok(a !== undefined && b !== undefined);
      assert.ok(b - a >= (COOLDOWN_S - 3) * 1000, `${name}: cooldown respected (${b - a} ms)`);
    }
  }
  const refusals = events.filter((e) => e.reason === 'ConcurrencyCapReached');
  const refused = new Set(refusals.map((e) => e.regarding.name));
  assert.ok(refused.size >= TASKS - CAP - 5, `${refused.size} AITasks were refused`);
  for (const e of refusals) {
    assert.equal(e.type, 'Warning');
    assert.match(
      e.note,
      new RegExp(`remediations in flight \\(--max-concurrent-remediations=${CAP}\\): ${ns}/t`),
    );
  }
  assert.ok(
    (await op.metric('aiops_guardrail_refusals_total', { reason: 'ConcurrencyCapReached' })) >= refused.size,
  );
});
