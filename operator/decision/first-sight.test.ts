import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { firstSight, PENDING_MESSAGE } from './first-sight.ts';

const NOW = '2026-01-01T00:00:00Z';

test('firstSight: Pending once, for an AITask without a phase; never over a phase', () => {
  const seeded = firstSight(undefined, NOW);
  assert.ok(seeded);
  assert.equal(seeded.phase, 'Pending');
  assert.equal(seeded.message, PENDING_MESSAGE);
  assert.equal(seeded.observedGeneration, undefined, 'the spec is not evaluated yet');
  assert.equal(findCondition(seeded.conditions, 'Ready')?.status, 'Unknown');
  assert.equal(findCondition(seeded.conditions, 'Reconciling')?.status, 'True');
  assert.equal(findCondition(seeded.conditions, 'Reconciling')?.lastTransitionTime, NOW);
  assert.deepEqual(firstSight({}, NOW), seeded, 'an empty status is first sight too');
  for (const phase of [
    'Pending',
    'Monitoring',
    'Healing',
    'Healed',
    'Failed',
    'Paused',
    'AwaitingApproval',
  ] as const)
    assert.equal(firstSight({ phase }, NOW), undefined, phase);
});
