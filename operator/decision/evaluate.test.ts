import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type * as v2 from '../../api/schema/v2.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { decide } from './decide.ts';
import { evaluate } from './evaluate.ts';
import { recordOutcome } from './outcome.ts';

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

test('manual approval: the decision waits in pendingDecision with a stable id while it is unchanged', () => {
  const manual: v2.AITask = { ...base, spec: { ...base.spec, approval: 'Manual' } };
  const first = step(manual, 0.9, T0);
  assert.equal(first.act, undefined);
  assert.equal(first.status.phase, 'AwaitingApproval');
  const waiting = first.status.pendingDecision;
  assert.ok(waiting);
  assert.equal(waiting.id, 'id-1');
  assert.equal(waiting.blockedBy, 'AwaitingApproval');
  assert.deepEqual(waiting.effect, { fromReplicas: 2, replicas: 3 });
  const again = evaluate(
    { ...manual, status: first.status },
    decide(
      { ...manual, status: first.status },
      { found: true, replicas: 2 },
      { ok: true, value: 0.95 },
      T0 + 60_000,
    ),
    T0 + 60_000,
    'id-2',
    60_000,
  );
  assert.equal(again.status.pendingDecision?.id, 'id-1');
  const moved = evaluate(
    { ...manual, status: first.status },
    decide(
      { ...manual, status: first.status },
      { found: true, replicas: 1 },
      { ok: true, value: 0.95 },
      T0 + 60_000,
    ),
    T0 + 60_000,
    'id-3',
    60_000,
  );
  assert.equal(moved.status.pendingDecision?.id, 'id-3', 'a different scale is a new decision');
});

test('LLMAvailable is dropped when the task leaves LLM mode; extra conditions and events are applied', () => {
  const llm: v2.AITask = {
    ...base,
    spec: {
      ...base.spec,
      decision: { mode: 'LLM', llm: { endpoint: 'http://llm.local/v1/chat/completions' } },
    },
  };
  const withLLM = evaluate(
    llm,
    decide(llm, { found: true, replicas: 2 }, { ok: true, value: 0.9 }, T0),
    T0,
    'a',
    60_000,
    {
      source: 'llm',
      note: 'LLM advice ScaleUp (confidence 0.9): load',
      conditions: [{ type: 'LLMAvailable', status: 'True', reason: 'LLMAdvice', message: 'ok' }],
      events: [{ type: 'Normal', reason: 'LLMAdvice', action: 'Advise', note: 'n' }],
    },
  );
  assert.ok(withLLM.act);
  assert.equal(withLLM.act.decision.source, 'llm');
  assert.match(withLLM.act.decision.reason, /LLM advice/);
  assert.equal(findCondition(withLLM.status.conditions, 'LLMAvailable')?.status, 'True');
  assert.deepEqual(
    withLLM.events.map((e) => e.reason),
    ['LLMAdvice', 'ThresholdBreached'],
  );
  const rules = step({ ...base, status: withLLM.status }, 0.1, T0 + 1000);
  assert.equal(findCondition(rules.status.conditions, 'LLMAvailable'), undefined);
});

test('the LLM call behind a decision (model, latency, tokens) is recorded in it and kept through the outcome', () => {
  const call = { model: 'gpt-x', latencyMs: 412, promptTokens: 180, completionTokens: 22 };
  const verdict = decide(base, { found: true, replicas: 2 }, { ok: true, value: 0.9 }, T0);
  const withCall = evaluate(base, verdict, T0, 'a', 60_000, { source: 'llm', llm: call });
  assert.ok(withCall.act);
  assert.deepEqual(withCall.act.decision.llm, call);
  assert.deepEqual(withCall.status.pendingDecision?.llm, call);
  const done = recordOutcome(
    base,
    withCall.status,
    withCall.act.decision,
    withCall.act.plan,
    { executed: true, message: 'scaled' },
    T0 + 1000,
  );
  assert.deepEqual(done.status.lastDecision?.llm, call);
  const without = evaluate(base, verdict, T0, 'b', 60_000);
  assert.equal(without.act?.decision.llm, undefined, 'no call, no record');
});
