// Attacks on the operator's memory through one tenant namespace filled with every kind the
// operator reads there that a tenant may write: AITasks filled to the CRD's bounds (~1.3 MB
// each, refused by the task cache), bare Pods of ~1.1 MB each carrying its own target's labels
// (read when the operator looks for a pod of the target to act on), paused zero-replica
// Deployments and zero-replica StatefulSets with ~1.1 MB pod templates (read while each
// target cache fills at every start), and a Deployment and a StatefulSet whose selectors are
// larger than any real one. The operator reads those kinds a page at a time (page sizes from
// a byte budget per kind), keeps only what it reads of each (operator/runtime/trim.ts), and
// refuses the oversized selectors, saying so in the status of the tasks that target them.
// In a memory cgroup of the shipped limit, a restart with all of it in place gets ready,
// its resident memory stays under the limit, and alice's task is still evaluated on time
// (stage.ts `bystander`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../../scripts/olm/deployment.ts';
import {
  deployment,
  statefulSet,
  type DeploymentManifest,
  type StatefulSetManifest,
} from '../support/workloads.ts';
import { eventually } from '../support/operator.ts';
import { createFullTasks } from './full-tasks.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** Bare Pods and paused Deployments mallory creates: each kind alone is past the old heap's reach. */
const COUNT = 150;
/** Zero-replica StatefulSets mallory creates beside them (StatefulSets are fewer than Deployments). */
const STATEFUL_SETS = 100;
/** AITasks filled to the CRD's bounds mallory creates beside them. */
const TASKS = 100;
/** Bytes of the filler in each: under etcd's 1.5 MiB object limit with the rest of the object. */
const FILLER_BYTES = 1_100_000;
/** Creates in flight at once. */
const WIDTH = 6;

/** Runs `make(i)` for i in [0, n) with WIDTH in flight. */
async function fill(n: number, make: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < n) await make(next++);
    }),
  );
}

test(`one namespace with ${TASKS} AITasks filled to the CRD's bounds, ${COUNT} bare 1.1 MB Pods on a target's labels, ${COUNT} paused 1.1 MB Deployments, ${STATEFUL_SETS} 1.1 MB StatefulSets and oversized selectors: the operator restarts under its limit and says the refusals`, async (t) => {
  const m = stage.mallory;
  const filler = 'x'.repeat(FILLER_BYTES);

  // The target: no replicas, so its ReplicaSet owns no pod and every evaluation reads all of
  // the bare pods that carry its labels before finding none to restart.
  const web = await m.deployments.create(m.namespace, deployment('web', 0));
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'web' }, 5);
  await m.tasks.create(
    m.namespace,
    loadTask('web', { action: 'RestartPod', cooldownSeconds: 0, maxAttempts: 100 }),
  );
  // Bare pods on web's labels, controlled by web itself: no ReplicaSet adopts them and the
  // garbage collector keeps them, yet they are not web's pods (never through a ReplicaSet).
  const container = {
    name: 'app',
    image: 'registry.example.com/demo/app:1.0',
    env: [{ name: 'FILLER', value: filler }],
  };
  const podSpec: Record<string, unknown> = { containers: [container] };
  await fill(COUNT, (i) =>
    m.pods.create(m.namespace, {
      metadata: {
        name: `bare-${i}`,
        labels: { app: 'web' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'web',
            uid: web.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      spec: podSpec,
    }),
  );
  await fill(COUNT, (i) => {
    const d = deployment(`paused-${i}`, 0, podSpec);
    const paused = { ...d, spec: { ...d.spec, paused: true } };
    return m.deployments.create(m.namespace, paused);
  });
  await fill(STATEFUL_SETS, (i) => m.statefulSets.create(m.namespace, statefulSet(`sts-${i}`, 0, podSpec)));
  // A selector past any real one's size, on a Deployment and on a StatefulSet of the same
  // name: each refused by its kind's cache, said in the status of the task on it.
  const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`wide-${i}`, 'yes']));
  const widen = <W extends DeploymentManifest | StatefulSetManifest>(w: W): W => ({
    ...w,
    spec: {
      ...w.spec,
      selector: { matchLabels: labels },
      template: { ...w.spec.template, metadata: { labels } },
    },
  });
  await m.deployments.create(m.namespace, widen(deployment('wide', 0)));
  await m.statefulSets.create(m.namespace, widen(statefulSet('wide', 0)));
  await m.tasks.create(m.namespace, loadTask('wide', { action: 'Noop' }));
  const wideSts = loadTask('wide', { action: 'Noop' });
  await m.tasks.create(m.namespace, {
    ...wideSts,
    metadata: { name: 'wide-statefulset' },
    spec: { ...wideSts.spec, target: { kind: 'StatefulSet', name: 'wide' } },
  });
  const taskBytes = await createFullTasks(m, TASKS);
  t.diagnostic(
    `${COUNT} pods, ${COUNT} deployments and ${STATEFUL_SETS} statefulsets of ~${FILLER_BYTES} bytes each and ${TASKS} tasks of ~${taskBytes} bytes created`,
  );

  // Every start lists every Deployment and StatefulSet before it is ready; under the memory
  // limit, a page that does not fit kills the operator and restartOperator throws.
  await stage.restartOperator();
  t.diagnostic(`operator restarted under the shipped memory limit, V8 heap limit ${stage.heapLimitMiB} MiB`);
  const op = stage.operator;

  for (const [task, kind, resource] of [
    ['wide', 'Deployment', 'deployments'],
    ['wide-statefulset', 'StatefulSet', 'statefulsets'],
  ] as const) {
    const refused = await eventually(
      `mallory's task on the oversized ${kind} selector to say it is refused`,
      async () => {
        const c = findCondition((await m.tasks.get(m.namespace, task)).status?.conditions, 'TargetFound');
        return c?.reason === 'TargetRefused' ? c : undefined;
      },
      120_000,
    );
    assert.match(refused.message, new RegExp(`^${kind} ${m.namespace}/wide .*selector`));
    assert.ok(
      (await op.metric('aiops_cache_objects_refused_total', { resource, reason: 'NotAdmitted' })) >= 1,
      `the ${kind} refusal is counted`,
    );
  }
  // The bare pods were read, page by page, and none of them chosen.
  await eventually(
    "mallory's RestartPod task to find no pod of its own after reading the bare ones",
    async () => {
      const task = await m.tasks.get(m.namespace, 'web');
      return task.status?.lastDecision?.blockedBy === 'NoPodToRestart' ? true : undefined;
    },
    120_000,
  );
  await eventually(
    `the ${TASKS} filled tasks to be refused by the new operator's task cache`,
    async () => {
      const n = await op.metric('aiops_cache_objects_refused_total', { resource: 'aitasks' });
      return n >= TASKS ? n : undefined;
    },
    120_000,
  );
  const cached = await op.metric('aiops_cache_objects', { resource: 'deployments' });
  const bytes = await op.metric('aiops_cache_bytes', { resource: 'deployments' });
  t.diagnostic(`deployments cached: ${cached} in ${bytes} bytes`);
  assert.ok(cached >= COUNT, `${cached} deployments cached`);
  assert.ok(bytes < cached * 2048, `${bytes} bytes for ${cached} trimmed deployments`);
  const sets = await op.metric('aiops_cache_objects', { resource: 'statefulsets' });
  const setBytes = await op.metric('aiops_cache_bytes', { resource: 'statefulsets' });
  t.diagnostic(`statefulsets cached: ${sets} in ${setBytes} bytes`);
  assert.ok(sets >= STATEFUL_SETS, `${sets} statefulsets cached`);
  assert.ok(setBytes < sets * 2048, `${setBytes} bytes for ${sets} trimmed statefulsets`);
  const rss = await op.metric('process_resident_memory_bytes');
  t.diagnostic(`resident memory ${Math.round(rss / 2 ** 20)} MiB`);
  assert.ok(rss < OPERATOR_MEMORY_LIMIT_MIB * 2 ** 20, `resident memory ${rss} bytes`);
  await undisturbed(120_000);
});
