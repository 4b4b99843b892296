// Integration: StatefulSet targets, through the operator process under the shipped RBAC.
// ScaleUp and ScaleDown write the StatefulSet's /scale within the task's bounds; RestartPod
// evicts exactly one pod the StatefulSet controls, the highest ordinal, which the StatefulSet
// then creates again, while a bare pod carrying its labels and a higher ordinal (named so the
// StatefulSet does not adopt it, as it would `cache-9`) is never touched; a Deployment of the
// same name is a different target with its own AITask; a metric whose sample names one of its
// pods has RestartPod take that pod.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ResourceClient } from '../lib/kube/resources.ts';
import { findCondition } from '../api/status/conditions.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, GAUGE, metricsForFile, operatorFor } from '../test/support/remediation.ts';
import { deployment, statefulSet } from '../test/support/workloads.ts';
import { Resources, type Workload } from './runtime/kinds.ts';

const metrics = metricsForFile();

/** The StatefulSet client and what the shared fixtures give. */
async function withStatefulSets() {
  const c = await clients();
  return { ...c, statefulSets: new ResourceClient<Workload>(c.transport, Resources.statefulsets) };
}

/** A v2 AITask on StatefulSet `target` reading `series`. */
function onStatefulSet(
  name: string,
  target: string,
  series: string,
  remediation: Parameters<typeof aitask>[3],
  trigger: { operator?: 'GreaterThan' | 'LessThan' } = {},
) {
  const task = aitask(name, target, series, remediation);
  return {
    ...task,
    spec: {
      ...task.spec,
      target: { kind: 'StatefulSet' as const, name: target },
      trigger: { ...task.spec.trigger, ...trigger },
    },
  };
}

describe('StatefulSet targets', { concurrency: true }, () => {
  test('ScaleUp and ScaleDown write the StatefulSet’s scale within the bounds; a Deployment of the same name is another target', async (t) => {
    const ns = await freshNamespace('sts-scale', (fn) => t.after(fn));
    const c = await withStatefulSets();
    const series = ns;
    await metrics.set(series, 5);
    await c.statefulSets.create(ns, statefulSet('db', 1));
    await c.deployments.create(ns, deployment('db', 1));
    const up = { action: 'ScaleUp' as const, cooldownSeconds: 0, scale: { maxReplicas: 3 } };
    await c.tasks.create(ns, onStatefulSet('db-up', 'db', series, up));
    await c.tasks.create(ns, aitask('db-deploy', 'db', `${series}-quiet`, { action: 'Noop' }));
    await operatorFor(ns, metrics.prometheus.url, t);

    await eventually('the StatefulSet at its maxReplicas, 3', async () =>
      (await c.statefulSets.get(ns, 'db')).spec?.replicas === 3 ? true : undefined,
    );
    const bounded = await eventually('the next ScaleUp refused at the bound (AtMaxReplicas)', async () => {
      const o = await c.tasks.get(ns, 'db-up');
      return o.status?.lastDecision?.blockedBy === 'AtMaxReplicas' ? o : undefined;
    });
    assert.equal((await c.statefulSets.get(ns, 'db')).spec?.replicas, 3, 'never past maxReplicas');
    assert.equal((await c.deployments.get(ns, 'db')).spec?.replicas, 1, 'the Deployment db is not scaled');
    const found = findCondition(bounded.status?.conditions, 'TargetFound');
    assert.ok(found?.status === 'True', JSON.stringify(found));
    assert.match(found.message, new RegExp(`^StatefulSet ${ns}/db found`));
    const deployTask = await eventually(
      'the Deployment task Monitoring (not a DuplicateTarget)',
      async () => {
        const o = await c.tasks.get(ns, 'db-deploy');
        return o.status?.phase === 'Monitoring' ? o : undefined;
      },
    );
    assert.match(findCondition(deployTask.status?.conditions, 'TargetFound')?.message ?? '', /^Deployment /);

    await metrics.set(series, 0);
    await c.tasks.patch(ns, 'db-up', {
      spec: {
        trigger: { operator: 'LessThan', threshold: 1 },
        remediation: { action: 'ScaleDown', cooldownSeconds: 0, scale: { minReplicas: 2, maxReplicas: 3 } },
      },
    });
    await eventually('the StatefulSet down at its minReplicas, 2', async () =>
      (await c.statefulSets.get(ns, 'db')).spec?.replicas === 2 ? true : undefined,
    );
    await eventually('the next ScaleDown refused at the bound (AtMinReplicas)', async () =>
      (await c.tasks.get(ns, 'db-up')).status?.lastDecision?.blockedBy === 'AtMinReplicas' ? true : undefined,
    );
    assert.equal((await c.statefulSets.get(ns, 'db')).spec?.replicas, 2, 'never under minReplicas');
  });

  test('RestartPod evicts the highest ordinal the StatefulSet controls, never a bare pod with its labels', async (t) => {
    const ns = await freshNamespace('sts-restart', (fn) => t.after(fn));
    const c = await withStatefulSets();
    const series = ns;
    await c.statefulSets.create(ns, statefulSet('cache', 3));
    const template = statefulSet('cache', 1).spec.template;
    await c.pods.create(ns, {
      metadata: { name: 'cache-bare-9', labels: template.metadata.labels },
      spec: template.spec,
    });
    const uids = async (): Promise<Map<string, string> | undefined> => {
      const pods = (await c.pods.list(ns)).items.filter(
        (p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined,
      );
      return pods.length === 4
        ? new Map(pods.map((p) => [p.metadata.name ?? '', p.metadata.uid ?? '']))
        : undefined;
    };
    const before = await eventually('cache-0, cache-1, cache-2 and the bare cache-bare-9 running', uids);
    await metrics.set(series, 5);
    await c.tasks.create(
      ns,
      onStatefulSet('restart', 'cache', series, { action: 'RestartPod', cooldownSeconds: 3600 }),
    );
    await operatorFor(ns, metrics.prometheus.url, t);

    const done = await eventually('the RestartPod executed', async () => {
      const o = await c.tasks.get(ns, 'restart');
      return o.status?.lastDecision?.executed === true ? o : undefined;
    });
    assert.equal(done.status?.lastDecision?.effect?.pod, 'cache-2', 'the highest ordinal it controls');
    const after = await eventually('cache-2 created again by the StatefulSet', async () => {
      const now = await uids();
      return now !== undefined && now.get('cache-2') !== before.get('cache-2') ? now : undefined;
    });
    for (const name of ['cache-0', 'cache-1', 'cache-bare-9'])
      assert.equal(after.get(name), before.get(name), `${name} is untouched`);
  });

  test('RestartPod takes the pod the metric names when the StatefulSet controls it', async (t) => {
    const ns = await freshNamespace('sts-named', (fn) => t.after(fn));
    const c = await withStatefulSets();
    const series = ns;
    await c.statefulSets.create(ns, statefulSet('queue', 3));
    await eventually('queue-0, queue-1, queue-2 running', async () => {
      const pods = (await c.pods.list(ns)).items.filter((p) => p.status?.phase === 'Running');
      return pods.length === 3 ? pods : undefined;
    });
    metrics.exporter.set(GAUGE, { series, pod: 'queue-0' }, 5);
    await c.tasks.create(
      ns,
      onStatefulSet('restart', 'queue', series, { action: 'RestartPod', cooldownSeconds: 3600 }),
    );
    await operatorFor(ns, metrics.prometheus.url, t);

    const done = await eventually('the RestartPod executed', async () => {
      const o = await c.tasks.get(ns, 'restart');
      return o.status?.lastDecision?.executed === true ? o : undefined;
    });
    assert.equal(
      done.status?.lastDecision?.effect?.pod,
      'queue-0',
      'the pod the metric names, not the highest ordinal',
    );
  });
});
