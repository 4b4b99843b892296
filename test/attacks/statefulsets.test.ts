// Attacks through StatefulSet targets, which tenants may write as they write Deployments.
// Mallory points AITasks at alice's StatefulSet (spec.target.namespace) to scale it and evict
// its pods, and at its name as a Deployment; each is refused in its status and nothing of
// alice's moves: the same replicas, generation and pod UIDs once the refusal is said. A
// Deployment-kind task on mallory's own StatefulSet finds nothing: kinds never mix. And bare
// pods carrying her StatefulSet's labels, named with a higher ordinal than any of its own
// (but so that the StatefulSet does not adopt them, as it would `NAME-<ordinal>`), are never
// evicted by a RestartPod on it: only the pod the StatefulSet controls is, and once it has
// none the task finds no pod to restart. Last, mallory fills her namespace's share of the
// StatefulSet cache with StatefulSets made large where trimming keeps them (finalizers): her
// next one as large is refused and her task on it says so (TargetRefused, CacheFull), while a
// StatefulSet alice creates afterwards is found. Played with the tenants' own tokens against
// the operator under the CSV's RBAC.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { TARGET_KINDS } from '../../operator/runtime/target-kinds.ts';
import { heapCharge } from '../../operator/runtime/heap-charge.ts';
import {
  chargeBounds,
  ledgerCharge,
  MAX_OBJECT_CHARGE,
  memoryBasis,
} from '../../operator/runtime/memory-ledger.ts';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../../scripts/olm/deployment.ts';
import { eventually } from '../support/operator.ts';
import { statefulSet } from '../support/workloads.ts';
import { LOAD, loadTask, type Tenant } from './stage.ts';
import { useStage } from './use-stage.ts';

/** Alice's StatefulSet mallory aims at, and its replicas. */
const DB = 'db';
const DB_REPLICAS = 2;
/**
 * Finalizers on each StatefulSet mallory fills her share with: ~33 KB of JSON, ~50 KiB of
 * heap charge, which trimming keeps, under MAX_OBJECT_CHARGE.
 */
const FINALIZERS = 450;

/**
 * The running pods of `tenant` whose names pass `named`, name to UID, once there are `count`
 * of them and none is being deleted; undefined until then.
 */
async function runningPods(
  tenant: Tenant,
  count: number,
  named: (name: string) => boolean,
): Promise<Map<string, string> | undefined> {
  const pods = (await tenant.pods.list(tenant.namespace)).items.filter((p) => named(p.metadata.name ?? ''));
  const running = pods.filter(
    (p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined,
  );
  return running.length === count && pods.length === count
    ? new Map(running.map((p) => [p.metadata.name ?? '', p.metadata.uid ?? '']))
    : undefined;
}

/** The pods of StatefulSet `name` and of nothing else: `name-<ordinal>`. */
const ordinalOf = (name: string) => (pod: string) => new RegExp(`^${name}-\\d+$`).test(pod);

const { stage, undisturbed } = useStage({
  setup: async (s) => {
    await s.alice.statefulSets.create(s.alice.namespace, statefulSet(DB, DB_REPLICAS));
    s.exporter.set(LOAD, { namespace: s.alice.namespace, deployment: DB }, 5);
    await eventually(`alice's ${DB} at ${DB_REPLICAS} running pods`, () =>
      runningPods(s.alice, DB_REPLICAS, ordinalOf(DB)),
    );
  },
});

/** A ScaleUp with room to act at every evaluation. */
const SCALE_UP: v2.Spec['remediation'] = {
  action: 'ScaleUp',
  scale: { maxReplicas: 10 },
  cooldownSeconds: 0,
  maxAttempts: 10,
};

/** A task of mallory's on `target`, breaching (LOAD of `DB` is 5). */
function attack(name: string, target: v2.Spec['target'], remediation: v2.Spec['remediation']): v2.AITask {
  const task = loadTask(DB, remediation, { target });
  return { ...task, metadata: { name } };
}

/** Waits until mallory's task `name` says `reason` in its TargetFound condition; returns the task. */
async function refusedWith(name: string, reason: string): Promise<v2.AITask> {
  const m = stage.mallory;
  return eventually(`${name} to say ${reason}`, async () => {
    const task = await m.tasks.get(m.namespace, name);
    return findCondition(task.status?.conditions, 'TargetFound')?.reason === reason ? task : undefined;
  });
}

test('a StatefulSet target in another namespace, of either kind, is refused and nothing of it moves', async () => {
  const m = stage.mallory;
  const a = stage.alice;
  const before = await a.statefulSets.get(a.namespace, DB);
  const podsBefore = await runningPods(a, DB_REPLICAS, ordinalOf(DB));
  assert.ok(podsBefore, `alice's ${DB} pods running`);
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: DB }, 5);
  const across = { name: DB, namespace: a.namespace };
  const attacks = [
    attack('scale-across', { kind: 'StatefulSet', ...across }, SCALE_UP),
    attack(
      'evict-across',
      { kind: 'StatefulSet', ...across },
      { action: 'RestartPod', cooldownSeconds: 0, maxAttempts: 10 },
    ),
    attack('deployment-across', { kind: 'Deployment', ...across }, SCALE_UP),
  ];
  for (const task of attacks) await m.tasks.create(m.namespace, task);
  for (const task of attacks) {
    const refused = await refusedWith(task.metadata.name ?? '', 'CrossNamespaceRefused');
    assert.equal(findCondition(refused.status?.conditions, 'Stalled')?.reason, 'CrossNamespaceRefused');
    assert.notEqual(refused.status?.lastDecision?.executed, true, `${task.metadata.name} never acts`);
  }
  const after = await a.statefulSets.get(a.namespace, DB);
  assert.equal(after.spec?.replicas, DB_REPLICAS, `alice's ${DB} is not scaled`);
  assert.equal(after.metadata.generation, before.metadata.generation, `alice's ${DB} is not written`);
  assert.deepEqual(
    await runningPods(a, DB_REPLICAS, ordinalOf(DB)),
    podsBefore,
    `alice's ${DB} pods are the same pods`,
  );
  await undisturbed();
});

test('a Deployment-kind task on a StatefulSet of its own namespace finds no target: kinds never mix', async () => {
  const m = stage.mallory;
  await m.statefulSets.create(m.namespace, statefulSet('ledger', 1));
  const created = await m.statefulSets.get(m.namespace, 'ledger');
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: DB }, 5);
  await m.tasks.create(
    m.namespace,
    attack('ledger-as-deployment', { kind: 'Deployment', name: 'ledger' }, SCALE_UP),
  );
  const missing = await refusedWith('ledger-as-deployment', 'TargetNotFound');
  assert.match(
    findCondition(missing.status?.conditions, 'TargetFound')?.message ?? '',
    new RegExp(`^Deployment ${m.namespace}/ledger does not exist`),
  );
  const after = await m.statefulSets.get(m.namespace, 'ledger');
  assert.equal(after.spec?.replicas, 1, 'the StatefulSet ledger is not scaled');
  assert.equal(after.metadata.generation, created.metadata.generation, 'nor written');
  await undisturbed();
});

test('RestartPod on a StatefulSet evicts its own pod, never a bare pod on its labels with a higher ordinal', async () => {
  const m = stage.mallory;
  const cache = statefulSet('cache', 2);
  await m.statefulSets.create(m.namespace, cache);
  // Not `cache-<ordinal>`: the StatefulSet would adopt an orphan of that name.
  const bare = ['cache-x-9', 'cache-bare-99'];
  for (const name of bare)
    await m.pods.create(m.namespace, {
      metadata: { name, labels: cache.spec.template.metadata.labels },
      spec: cache.spec.template.spec,
    });
  const before = await eventually('cache-0, cache-1 and the bare pods running', () =>
    runningPods(m, 2 + bare.length, (name) => name.startsWith('cache-')),
  );
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'cache' }, 5);
  const restart = loadTask('cache', { action: 'RestartPod', cooldownSeconds: 3600, maxAttempts: 10 });
  await m.tasks.create(m.namespace, {
    ...restart,
    spec: { ...restart.spec, target: { kind: 'StatefulSet', name: 'cache' } },
  });

  const done = await eventually('the RestartPod executed', async () => {
    const task = await m.tasks.get(m.namespace, 'cache');
    return task.status?.lastDecision?.executed === true ? task : undefined;
  });
  assert.equal(
    done.status?.lastDecision?.effect?.pod,
    'cache-1',
    'the highest ordinal the StatefulSet controls',
  );
  const after = await eventually('cache-1 created again by the StatefulSet', async () => {
    const now = await runningPods(m, 2 + bare.length, (name) => name.startsWith('cache-'));
    return now !== undefined && now.get('cache-1') !== before.get('cache-1') ? now : undefined;
  });
  for (const name of ['cache-0', ...bare])
    assert.equal(after.get(name), before.get(name), `${name} is untouched`);

  // With no pod of its own, the bare pods are all a RestartPod on it could find: it takes none.
  await m.statefulSets.patch(m.namespace, 'cache', { spec: { replicas: 0 } });
  const left = await eventually("the StatefulSet's own pods gone", () =>
    runningPods(m, bare.length, (name) => name.startsWith('cache-')),
  );
  assert.deepEqual([...left.keys()].sort(), [...bare].sort());
  const patched = await m.tasks.patch(m.namespace, 'cache', {
    spec: { remediation: { cooldownSeconds: 0 } },
  });
  await eventually('the RestartPod to find no pod of the StatefulSet', async () => {
    const task = await m.tasks.get(m.namespace, 'cache');
    const seen = (task.status?.observedGeneration ?? 0) >= (patched.metadata.generation ?? 1);
    return seen && task.status?.lastDecision?.blockedBy === 'NoPodToRestart' ? true : undefined;
  });
  assert.deepEqual(
    await runningPods(m, bare.length, (name) => name.startsWith('cache-')),
    new Map(bare.map((name) => [name, before.get(name)])),
    'the bare pods are the same pods',
  );
  await undisturbed();
});

test("one namespace's StatefulSets fill only its share of the StatefulSet cache: the next as large is refused in its task's status, another namespace's is found", async (t) => {
  const m = stage.mallory;
  const a = stage.alice;
  const ledger = ledgerCharge(memoryBasis(stage.heapLimitMiB * 2 ** 20, OPERATOR_MEMORY_LIMIT_MIB * 2 ** 20));
  const share = chargeBounds(ledger, TARGET_KINDS.StatefulSet.share).maxNamespaceCharge;
  const finalizers = Array.from({ length: FINALIZERS }, (_, j) => `fill.example.com/${'f'.repeat(48)}-${j}`);
  const perObject = heapCharge(finalizers);
  assert.ok(
    perObject < MAX_OBJECT_CHARGE - 4096,
    `${perObject} bytes of charge of finalizers fit one cached object`,
  );
  const fat = Math.ceil(share / perObject) + 2;
  for (let i = 0; i < fat; i++) {
    const sts = statefulSet(`fat-${i}`, 0);
    await m.statefulSets.create(m.namespace, { ...sts, metadata: { ...sts.metadata, finalizers } });
  }
  const op = stage.operator;
  await eventually(`mallory's share of the StatefulSet cache to be full`, async () =>
    (await op.metric('aiops_cache_objects_refused_total', {
      resource: 'statefulsets',
      reason: 'CacheFull',
    })) >= 1
      ? true
      : undefined,
  );
  // Larger than each fat one, so the room they left (less than one of them) cannot hold it.
  const lateSts = statefulSet('late', 1);
  await m.statefulSets.create(m.namespace, {
    ...lateSts,
    metadata: { ...lateSts.metadata, finalizers: [...finalizers, 'fill.example.com/late'] },
  });
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'late' }, 5);
  const late = loadTask('late', SCALE_UP);
  await m.tasks.create(m.namespace, {
    ...late,
    spec: { ...late.spec, target: { kind: 'StatefulSet', name: 'late' } },
  });
  const refused = await refusedWith('late', 'TargetRefused');
  assert.match(
    findCondition(refused.status?.conditions, 'TargetFound')?.message ?? '',
    new RegExp(
      `^StatefulSet ${m.namespace}/late is not read by the operator \\(CacheFull\\).*namespace ${m.namespace}`,
    ),
  );
  assert.equal((await m.statefulSets.get(m.namespace, 'late')).spec?.replicas, 1, 'late is not scaled');

  await a.statefulSets.create(a.namespace, statefulSet('orders', 1));
  const watch = loadTask(
    'orders',
    { action: 'Noop' },
    { trigger: { query: `max(${LOAD}{deployment="orders"})`, threshold: 1000 } },
  );
  await a.tasks.create(a.namespace, {
    ...watch,
    spec: { ...watch.spec, target: { kind: 'StatefulSet', name: 'orders' } },
  });
  const found = await eventually("alice's StatefulSet orders found", async () => {
    const c = findCondition((await a.tasks.get(a.namespace, 'orders')).status?.conditions, 'TargetFound');
    return c?.status === 'True' ? c : undefined;
  });
  assert.match(found.message, new RegExp(`^StatefulSet ${a.namespace}/orders found`));
  const bytes = await op.metric('aiops_cache_bytes', { resource: 'statefulsets' });
  t.diagnostic(
    `${fat} StatefulSets of ${perObject} bytes of finalizers: the StatefulSet cache holds ${bytes} bytes`,
  );
  assert.ok(bytes <= share + 64 * 1024, `${bytes} bytes cached: mallory's share (${share}) and alice's few`);
  // What alice made here goes, so the bystander check compares her workloads as they were.
  await a.tasks.delete(a.namespace, 'orders');
  await a.statefulSets.delete(a.namespace, 'orders');
  await undisturbed();
});
