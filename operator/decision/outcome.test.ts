import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type * as v2 from '../../api/schema/v2.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { decide, DEFAULTS, type MetricObservation, type TargetObservation } from './decide.ts';
import { evaluate } from './evaluate.ts';
import { recordOutcome, withCooldown } from './outcome.ts';

const T0 = Date.parse('2026-01-01T00:00:00.250Z');
const INTERVAL_MS = 10_000;
const target: TargetObservation = { found: true, replicas: 2 };

function task(remediation: v2.Spec['remediation']): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 't', namespace: 'ns', generation: 1 },
    spec: { target: { kind: 'Deployment', name: 'web' }, trigger: { threshold: 1 }, remediation },
  };
}

/** One evaluation of `metric` at `now`, as the reconciler runs it. */
function step(t: v2.AITask, metric: MetricObservation, now: number) {
  return evaluate(t, decide(t, target, metric, now), now, `id-${now}`, INTERVAL_MS);
}

/** A breach acted on at T0: the status after the outcome, plain (recordOutcome) and with the cooldown. */
function actedOn(t: v2.AITask, value: number) {
  const metric: MetricObservation = { ok: true, value };
  const decided = step(t, metric, T0);
  assert.ok(decided.act, 'the breach is acted on');
  const withDecision = { ...t, status: decided.status };
  const plain = recordOutcome(
    withDecision,
    decided.status,
    decided.act.decision,
    decided.act.plan,
    { executed: true, message: 'done' },
    T0 + 300,
  );
  const cooled = withCooldown(withDecision, plain, { target, metric }, T0 + 300, DEFAULTS, INTERVAL_MS);
  return { metric, plain, cooled };
}

test('withCooldown: after a Noop the next evaluation in breach computes the status as written (no third write)', () => {
  const t = task({ action: 'Noop', cooldownSeconds: 60 });
  const { metric, plain, cooled } = actedOn(t, 2);
  const before = step({ ...t, status: plain.status }, metric, T0 + INTERVAL_MS);
  assert.ok(!isDeepStrictEqual(before.status, plain.status), 'the plain outcome was followed by a write');
  const next = step({ ...t, status: cooled.status }, metric, T0 + INTERVAL_MS);
  assert.ok(isDeepStrictEqual(next.status, cooled.status), 'nothing to write');
  const untimed = (st: v2.Status): v2.Status => ({
    ...st,
    conditions: (st.conditions ?? []).map((c) => ({ ...c, lastTransitionTime: '' })),
  });
  assert.deepEqual(
    untimed(next.status),
    untimed(before.status),
    'what the third write wrote, the outcome wrote',
  );
  assert.equal(findCondition(cooled.status.conditions, 'RemediationAllowed')?.reason, 'Cooldown');
});

test('withCooldown: the decision record and attempts are the outcome’s; the cooldown’s Event follows the action’s', () => {
  const t = task({ action: 'ScaleUp', cooldownSeconds: 60, maxAttempts: 3 });
  const { plain, cooled } = actedOn(t, 2);
  assert.deepEqual(cooled.status.lastDecision, plain.status.lastDecision);
  assert.equal(cooled.status.lastDecision?.executed, true);
  assert.equal(cooled.status.lastExecutionTime, plain.status.lastExecutionTime);
  assert.equal(cooled.status.attempts, 1);
  assert.equal(cooled.status.pendingDecision, undefined);
  assert.equal(cooled.status.phase, 'Healing');
  assert.deepEqual(
    cooled.events.map((e) => e.reason),
    [...plain.events.map((e) => e.reason), 'Cooldown'],
    'the action’s Event, then the cooldown’s',
  );
});

test('withCooldown: no cooldown to say (none configured, or the last attempt made) leaves the outcome as it is', () => {
  const none = actedOn(task({ action: 'Noop', cooldownSeconds: 0 }), 2);
  assert.equal(none.cooled, none.plain);
  const last = actedOn(task({ action: 'ScaleUp', cooldownSeconds: 60, maxAttempts: 1 }), 2);
  assert.equal(last.cooled, last.plain, 'stalled comes next, not a cooldown');
});

test('withCooldown: any evaluation within the cooldown while the breach holds writes nothing', () => {
  fc.assert(
    fc.property(
      fc.constantFrom<v2.Spec['remediation']['action']>('Noop', 'ScaleUp', 'ScaleDown', 'RestartPod'),
      fc.integer({ min: 1, max: 600 }),
      fc.double({ min: 1.001, max: 1e6, noNaN: true }),
      fc.double({ min: 0.001, max: 0.999, noNaN: true }),
      (action, cooldownSeconds, value, at) => {
        const t = task({
          action,
          cooldownSeconds,
          maxAttempts: 5,
          scale: { minReplicas: 1, maxReplicas: 9 },
        });
        const { metric, cooled } = actedOn(t, value);
        // The cooldown runs from lastExecutionTime, which has whole seconds.
        const start = Date.parse(cooled.status.lastExecutionTime ?? '');
        const now = Math.max(T0 + 300, start + Math.floor(at * cooldownSeconds * 1000));
        const next = step({ ...t, status: cooled.status }, { ...metric, value: value + at }, now);
        return isDeepStrictEqual(next.status, cooled.status);
      },
    ),
  );
});
