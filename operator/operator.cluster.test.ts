// Integration: the operator as a child process against the harness cluster and a real
// Prometheus scraping a test-controlled exporter. Each test has its own namespace and its
// own operator scoped to it; the tests run concurrently.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResourceClient } from '../lib/kube/resources.ts';
import { FINALIZER } from '../api/install.ts';
import { sortRevisions, type ControllerRevision } from '../api/revisions.ts';
import type * as v2 from '../api/schema/v2.ts';
import { findCondition } from '../api/status/conditions.ts';
import { freshNamespace, testAITasks, testTransport } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import { startExporter, startPrometheus, type Exporter, type Prometheus } from '../scripts/lib/prometheus.ts';
import { Resources, type Deployment, type KubeEvent, type Pod } from './runtime/kinds.ts';
import { deployment } from '../test/support/workloads.ts';

const GAUGE = 'aiops_test_load';
let exporter: Exporter;
let prometheus: Prometheus;

before(async () => {
  exporter = await startExporter();
  prometheus = await startPrometheus([exporter.address]);
});
after(async () => {
  await prometheus.stop();
  await exporter.close();
});

async function clients() {
  const t = await testTransport();
  return {
    tasks: await testAITasks('v2'),
    deployments: new ResourceClient<Deployment>(t, Resources.deployments),
    pods: new ResourceClient<Pod>(t, Resources.pods),
    events: new ResourceClient<KubeEvent>(t, Resources.events),
    revisions: new ResourceClient<ControllerRevision>(t, Resources.controllerRevisions),
  };
}

/** A v2 AITask reading the exporter's gauge for `series`. */
function aitask(
  name: string,
  target: string,
  series: string,
  remediation: v2.Spec['remediation'],
): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name: target },
      trigger: { query: `${GAUGE}{series="${series}"}`, threshold: 1 },
      remediation,
      intervalSeconds: 10,
    },
  };
}

/** Starts an operator scoped to `ns`, stopped when the test ends. */
async function operatorFor(
  ns: string,
  t: { after: (fn: () => Promise<void>) => void },
  url = prometheus.url,
): Promise<OperatorProcess> {
  const op = await startOperatorProcess([`--namespace=${ns}`, `--prometheus-url=${url}`]);
  t.after(async () => {
    await op.stop();
  });
  return op;
}

async function setMetric(series: string, value: number | undefined): Promise<void> {
  exporter.set(GAUGE, { series }, value);
  await eventually(`Prometheus to see ${series}=${value}`, async () =>
    (await prometheus.query(`${GAUGE}{series="${series}"}`)) === value ? true : undefined,
  );
}

async function eventReasons(ns: string): Promise<string[]> {
  const { events } = await clients();
  return (await events.list(ns)).items.filter((e) => e.regarding.kind === 'AITask').map((e) => e.reason);
}

describe('operator on the harness', { concurrency: true }, () => {
  test('lifecycle: finalizer, Monitoring, observedGeneration follows the spec, revisions, deletion', async (t) => {
    const ns = await freshNamespace('op-life', (fn) => t.after(fn));
    const c = await clients();
    const series = ns;
    await setMetric(series, 0.1);
    await c.deployments.create(ns, deployment('web', 2));
    await c.tasks.create(ns, aitask('life', 'web', series, { action: 'Noop' }));
    await operatorFor(ns, t);
    const task = await eventually('Monitoring', async () => {
      const o = await c.tasks.get(ns, 'life');
      return o.status?.phase === 'Monitoring' && o.status.observedGeneration === o.metadata.generation
        ? o
        : undefined;
    });
    assert.ok(task.metadata.finalizers?.includes(FINALIZER));
    assert.equal(findCondition(task.status?.conditions, 'Ready')?.status, 'True');
    assert.ok(task.status?.conditions?.every((x) => x.observedGeneration === task.metadata.generation));

    await c.tasks.patch(ns, 'life', { spec: { trigger: { threshold: 2 } } });
    const changed = await eventually('observedGeneration 2', async () => {
      const o = await c.tasks.get(ns, 'life');
      return o.status?.observedGeneration === 2 ? o : undefined;
    });
    assert.equal(changed.metadata.generation, 2);
    const revs = sortRevisions((await c.revisions.list(ns)).items);
    assert.deepEqual(
      revs.map((r) => r.generation),
      [2, 1],
    );
    assert.equal(revs[0]?.spec.trigger.threshold, 2);

    await c.tasks.delete(ns, 'life');
    await eventually('the AITask to disappear', async () =>
      c.tasks.get(ns, 'life').then(
        () => undefined,
        () => true,
      ),
    );
  });

  test('ScaleUp: 2 → 3 replicas, stops at maxReplicas, Healing → Healed, Events recorded', async (t) => {
    const ns = await freshNamespace('op-scale', (fn) => t.after(fn));
    const c = await clients();
    const series = ns;
    await setMetric(series, 5);
    await c.deployments.create(ns, deployment('web', 2));
    await c.tasks.create(
      ns,
      aitask('scale', 'web', series, { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 0 }),
    );
    await operatorFor(ns, t);
    await eventually('3 replicas and Healing', async () => {
      const [d, o] = await Promise.all([c.deployments.get(ns, 'web'), c.tasks.get(ns, 'scale')]);
      return d.spec?.replicas === 3 && o.status?.phase === 'Healing' ? true : undefined;
    });
    const blocked = await eventually(
      'the next evaluation to stop at max',
      async () => {
        const o = await c.tasks.get(ns, 'scale');
        return o.status?.lastDecision?.blockedBy === 'AtMaxReplicas' ? o : undefined;
      },
      120_000,
    );
    assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 3);
    assert.equal(blocked.status?.attempts, 1);
    await setMetric(series, 0.2);
    await eventually(
      'Healed',
      async () => ((await c.tasks.get(ns, 'scale')).status?.phase === 'Healed' ? true : undefined),
      120_000,
    );
    const wanted = ['ThresholdBreached', 'ScaleUp', 'AtMaxReplicas', 'Remediated'];
    await eventually(`Events ${wanted.join(', ')} (sent after the status write)`, async () => {
      const reasons = await eventReasons(ns);
      return wanted.every((r) => reasons.includes(r)) ? true : undefined;
    });
  });

  test('RestartPod evicts exactly one pod and the ReplicaSet replaces it', async (t) => {
    const ns = await freshNamespace('op-restart', (fn) => t.after(fn));
    const c = await clients();
    const series = ns;
    await c.deployments.create(ns, deployment('web', 2));
    const running = async (): Promise<string[] | undefined> => {
      const pods = (await c.pods.list(ns)).items.filter(
        (p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp,
      );
      return pods.length === 2 ? pods.map((p) => p.metadata.name ?? '').sort() : undefined;
    };
    const before = await eventually('2 running pods', running);
    await setMetric(series, 5);
    await c.tasks.create(
      ns,
      aitask('restart', 'web', series, { action: 'RestartPod', cooldownSeconds: 3600 }),
    );
    await operatorFor(ns, t);
    const afterPods = await eventually('a replacement pod', async () => {
      const now = await running();
      return now && now.filter((n) => !before.includes(n)).length === 1 ? now : undefined;
    });
    assert.equal(afterPods.filter((n) => before.includes(n)).length, 1, 'exactly one original pod is gone');
    const o = await eventually(
      'the outcome recorded (the ReplicaSet may replace the pod first)',
      async () => {
        const task = await c.tasks.get(ns, 'restart');
        return task.status?.lastDecision?.executed === true ? task : undefined;
      },
    );
    assert.equal(o.status?.phase, 'Healing');
    await eventually('the RestartPod Event', async () =>
      (await eventReasons(ns)).includes('RestartPod') ? true : undefined,
    );
  });

  test('target missing → Failed/TargetNotFound, recovers when the Deployment appears', async (t) => {
    const ns = await freshNamespace('op-missing', (fn) => t.after(fn));
    const c = await clients();
    const series = ns;
    await setMetric(series, 0.1);
    await c.tasks.create(ns, aitask('missing', 'later', series, { action: 'Noop' }));
    await operatorFor(ns, t);
    const failed = await eventually('Failed', async () => {
      const o = await c.tasks.get(ns, 'missing');
      return o.status?.phase === 'Failed' ? o : undefined;
    });
    assert.equal(findCondition(failed.status?.conditions, 'TargetFound')?.reason, 'TargetNotFound');
    await eventually('the TargetNotFound Event (sent after the status write)', async () =>
      (await eventReasons(ns)).includes('TargetNotFound') ? true : undefined,
    );
    await c.deployments.create(ns, deployment('later', 1));
    await eventually('Monitoring', async () =>
      (await c.tasks.get(ns, 'missing')).status?.phase === 'Monitoring' ? true : undefined,
    );
  });

  test('steady state: reconciles of an unchanged AITask write nothing', async (t) => {
    const ns = await freshNamespace('op-steady', (fn) => t.after(fn));
    const c = await clients();
    const series = ns;
    await setMetric(series, 0.1);
    await c.deployments.create(ns, deployment('web', 1));
    await c.tasks.create(ns, aitask('steady', 'web', series, { action: 'ScaleUp' }));
    const op = await operatorFor(ns, t);
    const settled = await eventually('Monitoring', async () => {
      const o = await c.tasks.get(ns, 'steady');
      return o.status?.phase === 'Monitoring' ? o : undefined;
    });
    // The Event of reaching Monitoring is recorded after its status write: wait for it, so the
    // baseline holds every Event of the settling and only later ones would count as new.
    await eventually('the Healthy Event', async () =>
      (await eventReasons(ns)).includes('Healthy') ? true : undefined,
    );
    const reconciles = await op.metric('controller_runtime_reconcile_total');
    const writes = await op.metric('aiops_status_writes_total');
    const events = (await eventReasons(ns)).length;
    await eventually('3 more reconciles', async () =>
      (await op.metric('controller_runtime_reconcile_total')) >= reconciles + 3 ? true : undefined,
    );
    const now = await c.tasks.get(ns, 'steady');
    assert.equal(now.metadata.resourceVersion, settled.metadata.resourceVersion);
    assert.equal(await op.metric('aiops_status_writes_total'), writes);
    assert.equal((await eventReasons(ns)).length, events);
  });

  test('Prometheus down → MetricsAvailable=False and no action', async (t) => {
    const ns = await freshNamespace('op-promdown', (fn) => t.after(fn));
    const c = await clients();
    const own = await startExporter();
    const prom = await startPrometheus([own.address]);
    t.after(async () => {
      await prom.stop();
      await own.close();
    });
    own.set(GAUGE, { series: ns }, 0.1);
    await eventually('own Prometheus to scrape', async () =>
      (await prom.query(`${GAUGE}{series="${ns}"}`)) === 0.1 ? true : undefined,
    );
    await c.deployments.create(ns, deployment('web', 2));
    await c.tasks.create(ns, aitask('down', 'web', ns, { action: 'ScaleUp', cooldownSeconds: 0 }));
    await operatorFor(ns, t, prom.url);
    await eventually('Monitoring', async () =>
      (await c.tasks.get(ns, 'down')).status?.phase === 'Monitoring' ? true : undefined,
    );
    own.set(GAUGE, { series: ns }, 5);
    await prom.stop();
    const o = await eventually(
      'MetricsAvailable=False',
      async () => {
        const x = await c.tasks.get(ns, 'down');
        return findCondition(x.status?.conditions, 'MetricsAvailable')?.status === 'False' ? x : undefined;
      },
      120_000,
    );
    assert.equal(findCondition(o.status?.conditions, 'MetricsAvailable')?.reason, 'MetricsUnavailable');
    assert.equal(o.status?.lastDecision, undefined);
    assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 2);
  });
});
