import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import {
  isInFlight,
  settleDecision,
  verifyEffect,
  type EffectObservation,
  type Verification,
} from './settle.ts';

const decision = (action: v2.Action, effect?: v2.DecisionEffect): v2.DecisionRecord => ({
  id: 'd1',
  action,
  source: 'rules',
  reason: 'threshold > 1 breached',
  executed: false,
  at: '2026-01-01T00:00:00Z',
  ...(effect ? { effect } : {}),
});

test('verifyEffect: table of effects and what is found after a restart', () => {
  const scale = decision('ScaleUp', { fromReplicas: 2, replicas: 3 });
  const cases: [string, v2.DecisionRecord, EffectObservation, Verification][] = [
    ['scale reached', scale, { replicas: 3 }, 'done'],
    ['scale not started', scale, { replicas: 2 }, 'notDone'],
    ['scale moved elsewhere', scale, { replicas: 5 }, 'unknown'],
    ['target gone', scale, {}, 'unknown'],
    ['scale down reached', decision('ScaleDown', { fromReplicas: 3, replicas: 2 }), { replicas: 2 }, 'done'],
    ['pod gone', decision('RestartPod', { pod: 'p' }), { podPresent: false }, 'done'],
    ['pod still there', decision('RestartPod', { pod: 'p' }), { podPresent: true }, 'notDone'],
    ['node cordoned', decision('CordonNode', { pod: 'p', node: 'n' }), { nodeCordonedByTask: true }, 'done'],
    [
      'node schedulable, or cordoned by someone else (not claimed)',
      decision('CordonNode', { pod: 'p', node: 'n' }),
      { nodeCordonedByTask: false },
      'notDone',
    ],
    ['node gone', decision('CordonNode', { pod: 'p', node: 'n' }), {}, 'unknown'],
    ['noop', decision('Noop'), {}, 'done'],
    ['no effect recorded', decision('ScaleUp'), { replicas: 3 }, 'unknown'],
  ];
  for (const [name, d, obs, want] of cases) assert.equal(verifyEffect(d, obs), want, name);
});

test('settleDecision: done is recorded once (counted, node owned), notDone is dropped, unknown is never repeated', () => {
  const pending = decision('CordonNode', { pod: 'p', node: 'n1' });
  const status: v2.Status = {
    phase: 'Healing',
    attempts: 1,
    cordonedNodes: ['n0'],
    pendingDecision: pending,
  };
  const done = settleDecision(status, 'done');
  assert.ok(done);
  assert.equal(done.status.pendingDecision, undefined);
  assert.equal(done.status.lastDecision?.executed, true);
  assert.equal(done.status.attempts, 2);
  assert.equal(done.status.lastExecutionTime, pending.at);
  assert.deepEqual(done.status.cordonedNodes, ['n0', 'n1']);
  assert.equal(done.events[0]?.reason, 'DecisionVerified');
  assert.equal(settleDecision(done.status, 'done'), undefined, 'settling twice changes nothing');

  const notDone = settleDecision(status, 'notDone');
  assert.ok(notDone);
  assert.equal(notDone.status.pendingDecision, undefined);
  assert.equal(notDone.status.attempts, 1);
  assert.equal(notDone.status.lastExecutionTime, undefined, 'no cooldown: the rules may act at once');
  assert.deepEqual(notDone.status.cordonedNodes, ['n0']);
  assert.equal(notDone.status.lastDecision?.blockedBy, 'Interrupted');

  const unknown = settleDecision(status, 'unknown');
  assert.ok(unknown);
  assert.equal(unknown.status.attempts, 2);
  assert.equal(unknown.status.lastExecutionTime, pending.at);
  assert.deepEqual(unknown.status.cordonedNodes, ['n0'], 'an unverified node is not claimed');
  assert.equal(unknown.events[0]?.reason, 'DecisionUnverified');
});

test('a decision waiting for approval is not in flight', () => {
  assert.equal(isInFlight({ ...decision('ScaleUp'), blockedBy: 'AwaitingApproval' }), false);
  assert.equal(isInFlight({ ...decision('ScaleUp'), executed: true }), false);
  assert.equal(isInFlight(decision('ScaleUp')), true);
  assert.equal(
    settleDecision({ pendingDecision: { ...decision('ScaleUp'), blockedBy: 'AwaitingApproval' } }, 'done'),
    undefined,
  );
});
