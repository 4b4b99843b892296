// The condition helpers behave like controller-runtime's meta.SetStatusCondition, and
// kstatus summarises an AITask the way kubectl/Flux would: one row per rule.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCondition, isTrue, metaTime, removeCondition, setCondition } from './conditions.ts';
import { computeKStatus } from './kstatus.ts';
import type * as v2 from '../schema/v2.ts';

const T0 = '2026-11-29T10:00:00Z';
const T1 = '2026-11-29T10:05:00Z';

test('setCondition appends, updates in place, and moves lastTransitionTime only on a status flip', () => {
  let list = setCondition(
    undefined,
    { type: 'Ready', status: 'False', reason: 'NoData', message: 'no samples' },
    1,
    T0,
  );
  assert.deepEqual(list, [
    {
      type: 'Ready',
      status: 'False',
      reason: 'NoData',
      message: 'no samples',
      lastTransitionTime: T0,
      observedGeneration: 1,
    },
  ]);
  list = setCondition(
    list,
    { type: 'Ready', status: 'False', reason: 'QueryFailed', message: 'bad query' },
    2,
    T1,
  );
  assert.equal(list[0]?.lastTransitionTime, T0, 'same status keeps the transition time');
  assert.equal(list[0].reason, 'QueryFailed');
  assert.equal(list[0].observedGeneration, 2);
  list = setCondition(list, { type: 'Ready', status: 'True', reason: 'Healthy', message: 'ok' }, 2, T1);
  assert.equal(list[0]?.lastTransitionTime, T1, 'a flip moves it');
  list = setCondition(list, { type: 'Stalled', status: 'False', reason: 'Healthy', message: '' }, 2, T1);
  assert.deepEqual(
    list.map((c) => c.type),
    ['Ready', 'Stalled'],
    'order is kept, new types append',
  );
  assert.ok(isTrue(list, 'Ready'));
  assert.equal(findCondition(removeCondition(list, 'Ready'), 'Ready'), undefined);
});

test('metaTime has whole seconds like metav1.Time', () => {
  assert.equal(metaTime(new Date('2026-11-29T10:00:00.987Z')), '2026-11-29T10:00:00Z');
});

test('kstatus rules, one row each', async (t) => {
  const cond = (type: string, status: 'True' | 'False', reason: string) => ({
    type,
    status,
    reason,
    message: `${type} ${reason}`,
    lastTransitionTime: T0,
  });
  const task = (metadata: Partial<v2.AITask['metadata']>, status?: v2.AITask['status']) => ({
    metadata: { name: 'x', generation: 2, ...metadata },
    ...(status ? { status } : {}),
  });
  const rows: [string, ReturnType<typeof task>, string, string][] = [
    [
      'deletion requested',
      task({ deletionTimestamp: T1, finalizers: ['aiops.example.com/finalizer'] }, { observedGeneration: 2 }),
      'Terminating',
      'Terminating',
    ],
    ['never reconciled', task({}), 'InProgress', 'NotObserved'],
    ['observedGeneration lags', task({}, { observedGeneration: 1 }), 'InProgress', 'GenerationLag'],
    [
      'Stalled=True',
      task({}, { observedGeneration: 2, conditions: [cond('Stalled', 'True', 'MaxAttemptsReached')] }),
      'Failed',
      'MaxAttemptsReached',
    ],
    [
      'Reconciling=True',
      task({}, { observedGeneration: 2, conditions: [cond('Reconciling', 'True', 'Remediating')] }),
      'InProgress',
      'Remediating',
    ],
    [
      'Ready=False',
      task({}, { observedGeneration: 2, conditions: [cond('Ready', 'False', 'TargetNotFound')] }),
      'InProgress',
      'TargetNotFound',
    ],
    [
      'Ready=True',
      task({}, { observedGeneration: 2, conditions: [cond('Ready', 'True', 'Healthy')] }),
      'Current',
      'Healthy',
    ],
  ];
  for (const [name, input, status, reason] of rows) {
    await t.test(name, () => {
      const r = computeKStatus(input);
      assert.equal(r.status, status);
      assert.equal(r.reason, reason);
    });
  }
  assert.match(
    computeKStatus(task({}, { observedGeneration: 1 })).message,
    /generation 2 is newer than the observed generation 1/,
  );
});
