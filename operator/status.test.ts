import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type * as v2 from '../api/schema/v2.ts';
import { findCondition } from '../api/status/conditions.ts';
import { decide } from './decide.ts';
import { evaluate, recordOutcome, settleInterrupted } from './status.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const base: v2.AITask = {
  apiVersion: 'aiops.example.com/v2',
  kind: 'AITask',
  metadata: { name: 't', namespace: 'ns', generation: 1 },
  spec: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 0.8 },
    remediation: { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 0 },
  },
};

function step(task: v2.AITask, value: number, now: number, replicas = 2): ReturnType<typeof evaluate> {
  return evaluate(
    task,
    decide(task, { found: true, replicas }, { ok: true, value }, now),
    now,
    'id-1',
    60_000,
  );
}

test('a healthy task settles: the second evaluation computes the same status (nothing to write)', () => {
  const first = step(base, 0.1, T0);
  assert.equal(first.status.phase, 'Monitoring');
  assert.equal(first.status.observedGeneration, 1);
  assert.equal(findCondition(first.status.conditions, 'Ready')?.status, 'True');
  const again = step({ ...base, status: first.status }, 0.2, T0 + 60_000);
  assert.ok(isDeepStrictEqual(again.status, first.status));
});

test('breach → act (pendingDecision) → outcome (Healing) → recovery (Healed)', () => {
  const act = step(base, 0.9, T0);
  assert.ok(act.act);
  assert.equal(act.status.pendingDecision?.id, 'id-1');
  assert.equal(act.status.phase, 'Healing');
  const after = recordOutcome(
    base,
    act.status,
    act.act.decision,
    act.act.plan,
    { executed: true, message: 'scaled' },
    T0,
  );
  assert.equal(after.status.pendingDecision, undefined);
  assert.equal(after.status.lastDecision?.executed, true);
  assert.equal(after.status.attempts, 1);
  assert.equal(after.status.phase, 'Healing');
  assert.equal(after.events[0]?.reason, 'ScaleUp');
  const healed = step({ ...base, status: after.status }, 0.1, T0 + 60_000, 3);
  assert.equal(healed.status.phase, 'Healed');
  assert.equal(healed.status.attempts, 0);
  const steady = step({ ...base, status: healed.status }, 0.1, T0 + 120_000, 3);
  assert.ok(isDeepStrictEqual(steady.status, healed.status));
});

test('a blocked action is recorded once; the next identical evaluation changes nothing', () => {
  const first = step(base, 0.9, T0, 3);
  assert.equal(first.status.lastDecision?.blockedBy, 'AtMaxReplicas');
  const again = step({ ...base, status: first.status }, 0.95, T0 + 60_000, 3);
  assert.ok(isDeepStrictEqual(again.status, first.status));
});

test('a spec change moves observedGeneration and every condition with it', () => {
  const first = step(base, 0.1, T0);
  const next = step(
    { ...base, metadata: { ...base.metadata, generation: 2 }, status: first.status },
    0.1,
    T0 + 1000,
  );
  assert.equal(next.status.observedGeneration, 2);
  assert.ok(next.status.conditions?.every((c) => c.observedGeneration === 2));
});

test('an interrupted decision is recorded, counted and never re-run', () => {
  const act = step(base, 0.9, T0);
  const settled = settleInterrupted({ ...base, status: act.status });
  assert.ok(settled);
  assert.equal(settled.status.pendingDecision, undefined);
  assert.equal(settled.status.lastExecutionTime, act.status.pendingDecision?.at);
  assert.equal(settled.status.attempts, 1);
  assert.equal(settleInterrupted({ ...base, status: settled.status }), undefined);
});
