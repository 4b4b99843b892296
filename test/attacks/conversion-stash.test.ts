// Attacks through the conversion stash (the annotation aiops.example.com/conversion-data that
// keeps what one AITask version cannot say): any tenant can write it, so each test writes the
// stash a hostile tenant would, with the tenant's own token, against the operator hosting the
// conversion webhook under the CSV's RBAC. After each attack the operator process is the one
// that started, alice's task still follows her changes, and nothing outside mallory's
// namespace changed (stage.ts `bystander`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONVERSION_ANNOTATION } from '../../api/install.ts';
import { eventually } from '../support/operator.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** A v1 AITask of mallory's carrying `stash` as its conversion annotation. */
function v1Task(name: string, stash: string, intervalSeconds = 60) {
  return {
    apiVersion: 'aiops.example.com/v1' as const,
    kind: 'AITask' as const,
    metadata: { name, annotations: { [CONVERSION_ANNOTATION]: stash } },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'noop' as const, intervalSeconds },
  };
}

/** Every AITask of every namespace, read at v1 and at v1alpha1 (each needs conversion). */
async function listEverywhereAtOldVersions(): Promise<void> {
  await stage.adminTasks.v1.list(undefined);
  await stage.adminTasks.v1alpha1.list(undefined);
}

test('a stash path through __proto__ pollutes nothing: alice is not paused, the operator stays up', async () => {
  const stash = JSON.stringify({
    v2: [
      { p: ['__proto__', 'paused'], v: true },
      { p: ['constructor', 'prototype', 'dryRun'], v: true },
      { p: ['spec', '__proto__', 'paused'], v: true },
    ],
  });
  await stage.mallory.tasksV1.create(stage.mallory.namespace, v1Task('proto', stash));
  await stage.mallory.tasks.get(stage.mallory.namespace, 'proto');
  await stage.mallory.tasksV1.get(stage.mallory.namespace, 'proto');
  await listEverywhereAtOldVersions();
  await undisturbed();
  assert.equal(
    (await stage.adminTasks.v2.get(stage.alice.namespace, 'watch')).spec.paused,
    undefined,
    "alice's stored task is unchanged",
  );
});

test('a stash path 5,000 segments deep is ignored: reads at v1 still answer, the operator stays up', async () => {
  const deep = JSON.stringify({ v1: [{ p: ['spec', ...Array.from({ length: 5000 }, () => 'a')], v: 1 }] });
  await stage.mallory.tasks.create(stage.mallory.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'deep', annotations: { [CONVERSION_ANNOTATION]: deep } },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 60,
    },
  });
  await stage.mallory.tasksV1.get(stage.mallory.namespace, 'deep').catch(() => undefined);
  await listEverywhereAtOldVersions();
  await undisturbed();
});

test('a forged stash cannot store what v2 refuses: intervalSeconds 0 never reaches storage or a hot loop', async () => {
  const stash = JSON.stringify({ v2: [{ p: ['spec', 'intervalSeconds'], v: 0, b: 60 }] });
  await stage.mallory.tasksV1.create(stage.mallory.namespace, v1Task('bypass', stash, 60));
  const stored = await stage.adminTasks.v2.get(stage.mallory.namespace, 'bypass');
  assert.ok(
    (stored.spec.intervalSeconds ?? 60) >= 10,
    `stored intervalSeconds ${stored.spec.intervalSeconds} is within v2's bound`,
  );
  // Counted from the first reconcile of bypass on, so a starved operator cannot pass.
  await eventually('bypass reconciled', async () => {
    const t = await stage.mallory.tasks.get(stage.mallory.namespace, 'bypass');
    return t.status?.observedGeneration !== undefined ? true : undefined;
  });
  const before = await stage.operator.metric('controller_runtime_reconcile_total');
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 10_000));
  const reconciles = (await stage.operator.metric('controller_runtime_reconcile_total')) - before;
  const seconds = (Date.now() - started) / 1000;
  assert.ok(
    reconciles <= 3 * seconds,
    `${reconciles} reconciles in ${seconds} s (a hot loop makes thousands)`,
  );
  await undisturbed();
});

test('a stash that is not JSON fails nobody: every LIST at v1 and v1alpha1 answers', async () => {
  await stage.mallory.tasksV1.create(stage.mallory.namespace, v1Task('poison', '{not json'));
  await stage.mallory.tasksV1.create(stage.mallory.namespace, v1Task('poison-shape', '[1,2,3]'));
  await listEverywhereAtOldVersions();
  const alice = await stage.alice.tasksV1.list(stage.alice.namespace);
  assert.equal(alice.items.length, 1, 'alice reads her task at v1');
  await undisturbed();
});
