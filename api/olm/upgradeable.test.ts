import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeCondition, upgradeableCondition, type StoredVersionsView } from './upgradeable.ts';

const crd = (storage: string, stored: string[]): StoredVersionsView => ({
  spec: { versions: ['v1alpha1', 'v1', 'v2'].map((name) => ({ name, storage: name === storage })) },
  status: { storedVersions: stored },
});
const T0 = '2026-12-01T00:00:00Z';
const T1 = '2026-12-01T01:00:00Z';

test('Upgradeable: False while storedVersions lists another version than storage, True once migrated', () => {
  const cases: [string, string[], 'True' | 'False', string][] = [
    ['v2', ['v2'], 'True', 'StorageCurrent'],
    ['v2', ['v1', 'v2'], 'False', 'StorageMigrationNeeded'],
    ['v2', ['v1'], 'False', 'StorageMigrationNeeded'],
    ['v1', ['v1'], 'True', 'StorageCurrent'],
    ['v2', [], 'True', 'StorageCurrent'],
  ];
  for (const [storage, stored, status, reason] of cases) {
    const c = upgradeableCondition(crd(storage, stored), T0);
    assert.deepEqual(
      [c.type, c.status, c.reason],
      ['Upgradeable', status, reason],
      `${storage} ${stored.join()}`,
    );
  }
  assert.equal(
    upgradeableCondition(crd('v2', ['v1', 'v2']), T0).message,
    'AITasks may still be stored at v1 (CRD storedVersions: v1, v2); run `kubectl aiops migrate-storage` so a later release may stop serving v1',
  );
});

test('mergeCondition: nothing to write when unchanged; transition time kept while the status holds', () => {
  const held = upgradeableCondition(crd('v2', ['v1', 'v2']), T0);
  const other = { type: 'Other', status: 'True', reason: 'X', message: 'x', lastTransitionTime: T0 } as const;
  assert.deepEqual(mergeCondition([], held), [held]);
  assert.equal(mergeCondition([other, held], upgradeableCondition(crd('v2', ['v1', 'v2']), T1)), undefined);
  const migrated = mergeCondition([other, held], upgradeableCondition(crd('v2', ['v2']), T1));
  assert.deepEqual(
    migrated?.map((c) => [c.type, c.status, c.lastTransitionTime]),
    [
      ['Other', 'True', T0],
      ['Upgradeable', 'True', T1],
    ],
  );
  const reworded = mergeCondition([held], { ...upgradeableCondition(crd('v2', ['v1alpha1', 'v2']), T1) });
  assert.equal(reworded?.[0]?.lastTransitionTime, T0, 'same status: the transition time stays');
});
