import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvName } from '../../api/releases.ts';
import {
  healthConditions,
  mergeConditions,
  ownStorageVersion,
  upgradeableCondition,
  type OperatorConditionEntry,
  type StoredVersionsView,
} from './operator-condition.ts';

const crd = (storage: string, stored: string[]): StoredVersionsView => ({
  spec: { versions: ['v1alpha1', 'v1', 'v2'].map((name) => ({ name, storage: name === storage })) },
  status: { storedVersions: stored },
});
const T0 = '2026-12-01T00:00:00Z';
const T1 = '2026-12-01T01:00:00Z';

test('the own storage version comes from the release OLM names in OPERATOR_CONDITION_NAME', () => {
  assert.equal(ownStorageVersion(csvName('0.2.0')), 'v1');
  assert.equal(ownStorageVersion(csvName('1.0.0')), 'v2');
  assert.equal(ownStorageVersion(csvName('9.9.9')), 'v2', 'a release not in the history: the current one');
  assert.equal(ownStorageVersion('renamed-by-hand'), 'v2');
});

test('Upgradeable: False while storedVersions lists another version than storage, True once migrated', () => {
  const cases: [string, string[], 'True' | 'False', string][] = [
    ['v2', ['v2'], 'True', 'StorageCurrent'],
    ['v2', ['v1', 'v2'], 'False', 'StorageMigrationNeeded'],
    ['v2', ['v1'], 'False', 'StorageMigrationNeeded'],
    ['v1', ['v1'], 'True', 'StorageCurrent'],
    ['v2', [], 'True', 'StorageCurrent'],
  ];
  for (const [storage, stored, status, reason] of cases) {
    const c = upgradeableCondition(crd(storage, stored), storage, T0);
    assert.deepEqual(
      [c?.type, c?.status, c?.reason],
      ['Upgradeable', status, reason],
      `${storage} ${stored.join()}`,
    );
  }
  assert.equal(
    upgradeableCondition(crd('v2', ['v1', 'v2']), 'v2', T0)?.message,
    'AITasks may still be stored at v1 (CRD storedVersions: v1, v2); run `kubectl aiops migrate-storage` so that a later release may stop serving v1',
  );
});

test('Upgradeable: a release being replaced (the CRD stores another version) reports nothing', () => {
  // 0.2.0 (stores v1) still runs while OLM has put 1.0.0's CRD in place.
  assert.equal(
    upgradeableCondition(crd('v2', ['v1', 'v2']), ownStorageVersion(csvName('0.2.0')), T0),
    undefined,
  );
  assert.equal(upgradeableCondition(crd('v2', ['v2']), 'v1', T0), undefined);
});

test('health: Available once synced, Progressing while listing, Degraded while a watch keeps failing', () => {
  const view = (cs: OperatorConditionEntry[]): string[] => cs.map((c) => `${c.type}=${c.status}:${c.reason}`);
  assert.deepEqual(view(healthConditions({ leading: true, synced: false, failing: undefined }, T0)), [
    'Available=False:CachesNotSynced',
    'Progressing=True:Starting',
    'Degraded=False:WatchesHealthy',
  ]);
  assert.deepEqual(view(healthConditions({ leading: true, synced: true, failing: undefined }, T0)), [
    'Available=True:Reconciling',
    'Progressing=False:Started',
    'Degraded=False:WatchesHealthy',
  ]);
  const failing = healthConditions(
    { leading: true, synced: true, failing: 'aitasks: connect ECONNREFUSED' },
    T0,
  );
  assert.deepEqual(view(failing).at(-1), 'Degraded=True:WatchFailing');
  assert.equal(failing.at(-1)?.message, 'aitasks: connect ECONNREFUSED');
});

test('mergeConditions: nothing to write when unchanged; transition time kept while the status holds', () => {
  const held = upgradeableCondition(crd('v2', ['v1', 'v2']), 'v2', T0);
  const migratedNow = upgradeableCondition(crd('v2', ['v2']), 'v2', T1);
  assert.ok(held && migratedNow);
  const other = { type: 'Other', status: 'True', reason: 'X', message: 'x', lastTransitionTime: T0 } as const;
  assert.deepEqual(mergeConditions([], [held]), [held]);
  const again = upgradeableCondition(crd('v2', ['v1', 'v2']), 'v2', T1);
  assert.ok(again);
  assert.equal(mergeConditions([other, held], [again]), undefined);
  const migrated = mergeConditions([other, held], [migratedNow]);
  assert.deepEqual(
    migrated?.map((c) => [c.type, c.status, c.lastTransitionTime]),
    [
      ['Other', 'True', T0],
      ['Upgradeable', 'True', T1],
    ],
  );
  const reworded = upgradeableCondition(crd('v2', ['v1alpha1', 'v2']), 'v2', T1);
  assert.ok(reworded);
  assert.equal(
    mergeConditions([held], [reworded])?.[0]?.lastTransitionTime,
    T0,
    'same status: the time stays',
  );
});
