// Integration: two operator processes with leader election on a Lease. Only the leader
// acts; after `kill -9` of the leader the standby takes over once the lease expires, and
// the action already taken is not taken again. A leader frozen (SIGSTOP) between its
// decision and its action, longer than the lease, does not act when it runs again.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ResourceClient } from '../lib/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import { freshNamespace, testAITasks, testTransport } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import { startExporter, startPrometheus, type Exporter, type Prometheus } from '../scripts/lib/prometheus.ts';
import { Resources, type Deployment, type KubeEvent, type Lease } from './runtime/kinds.ts';
import { deployment } from '../test/support/workloads.ts';
import { PAUSE_ENV } from './action-gate.ts';

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

/**
 * Clients, a Deployment web (2 replicas) in `ns` whose load breaches (5), and the flags of
 * an operator on `ns` with fast leader election (lease 4 s, renew deadline 3 s, retry 0.5 s).
 */
async function breachingWeb(ns: string) {
  const transport = await testTransport();
  const tasks = await testAITasks('v2');
  const deployments = new ResourceClient<Deployment>(transport, Resources.deployments);
  const leases = new ResourceClient<Lease>(transport, Resources.leases);
  const events = new ResourceClient<KubeEvent>(transport, Resources.events);
  exporter.set('aiops_test_load', { series: ns }, 5);
  await eventually('Prometheus to scrape', async () =>
    (await prometheus.query(`aiops_test_load{series="${ns}"}`)) === 5 ? true : undefined,
  );
  await deployments.create(ns, deployment('web', 2));
  const args = [
    `--namespace=${ns}`,
    `--prometheus-url=${prometheus.url}`,
    '--leader-elect',
    `--leader-election-namespace=${ns}`,
    '--lease-duration=4s',
    '--renew-deadline=3s',
    '--retry-period=500ms',
  ];
  return { tasks, deployments, leases, events, args };
}

test('leader election: one actor; kill -9 the leader, the standby takes over, nothing is done twice', async (t) => {
  const ns = await freshNamespace('op-leader', (fn) => t.after(fn));
  const { tasks, deployments, leases, events, args } = await breachingWeb(ns);
  const ops: OperatorProcess[] = [];
  t.after(async () => {
    await Promise.all(ops.map((o) => o.stop()));
  });
  ops.push(await startOperatorProcess(args));
  ops.push(await startOperatorProcess(args));
  const holder = await eventually('a leader', async () => {
    const l = await leases.get(ns, 'aiops-operator-leader');
    return l.spec.holderIdentity ?? undefined;
  });
  const identityOf = (o: OperatorProcess): unknown =>
    o.logs.find((l) => l.msg === 'serving endpoints')?.identity;
  const leader = ops.find((o) => identityOf(o) === holder);
  const standby = ops.find((o) => o !== leader);
  assert.ok(leader && standby, `leader ${holder} is one of the two processes`);

  const task: v2.AITask = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'lead' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: `aiops_test_load{series="${ns}"}`, threshold: 1 },
      remediation: { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 3600 },
      intervalSeconds: 10,
    },
  };
  await tasks.create(ns, task);
  const acted = await eventually('the leader to scale once', async () => {
    const o = await tasks.get(ns, 'lead');
    return o.status?.lastDecision?.executed === true ? o : undefined;
  });
  assert.equal((await deployments.get(ns, 'web')).spec?.replicas, 3);
  assert.equal(
    await standby.metric('controller_runtime_reconcile_total'),
    0,
    'the standby does not reconcile',
  );
  assert.equal(await leader.metric('aiops_actions_total', { outcome: 'executed' }), 1);

  const killedAt = Date.now();
  await leader.kill();
  const newHolder = await eventually(
    'the standby to take the lease',
    async () => {
      const l = await leases.get(ns, 'aiops-operator-leader');
      return l.spec.holderIdentity === identityOf(standby) ? true : undefined;
    },
    60_000,
  );
  assert.ok(newHolder);
  t.diagnostic(`takeover after ${Date.now() - killedAt} ms (lease duration 4000 ms)`);
  await eventually('the new leader to reconcile', async () =>
    (await standby.metric('controller_runtime_reconcile_total')) > 0 ? true : undefined,
  );
  await tasks.patch(ns, 'lead', { metadata: { annotations: { poke: '1' } }, spec: { intervalSeconds: 11 } });
  await eventually('the new leader to observe generation 2', async () =>
    (await tasks.get(ns, 'lead')).status?.observedGeneration === 2 ? true : undefined,
  );
  const final = await tasks.get(ns, 'lead');
  assert.equal((await deployments.get(ns, 'web')).spec?.replicas, 3, 'not scaled a second time');
  assert.equal(final.status?.lastDecision?.id, acted.status?.lastDecision?.id);
  assert.equal(await standby.metric('aiops_actions_total', { outcome: 'executed' }), 0);
  const scaleEvents = (await events.list(ns)).items.filter((e) => e.reason === 'ScaleUp');
  assert.equal(scaleEvents.length, 1);
});

test('a frozen leader (SIGSTOP past the lease) never acts on its old decision once it runs again', async (t) => {
  const ns = await freshNamespace('op-freeze', (fn) => t.after(fn));
  const { tasks, deployments, leases, events, args } = await breachingWeb(ns);
  const identityOf = (o: OperatorProcess): unknown =>
    o.logs.find((l) => l.msg === 'serving endpoints')?.identity;
  // The first process pauses every remediation after writing its decision (PAUSE_ENV).
  const leader = await startOperatorProcess(args, { [PAUSE_ENV]: 'before-action' });
  t.after(async () => {
    leader.child.kill('SIGCONT');
    await leader.stop();
  });
  await eventually('the first process to lead', async () =>
    (await leases.get(ns, 'aiops-operator-leader')).spec.holderIdentity === identityOf(leader)
      ? true
      : undefined,
  );
  const standby = await startOperatorProcess(args);
  t.after(async () => {
    await standby.stop();
  });
  await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'freeze' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: `aiops_test_load{series="${ns}"}`, threshold: 1 },
      remediation: { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 3600 },
      intervalSeconds: 10,
    },
  });
  const paused = await eventually('the leader to decide and pause before acting', () =>
    Promise.resolve(leader.logs.find((l) => l.msg === 'paused for a crash test')),
  );
  leader.child.kill('SIGSTOP');
  await eventually(
    'the standby to take the lease',
    async () =>
      (await leases.get(ns, 'aiops-operator-leader')).spec.holderIdentity === identityOf(standby)
        ? true
        : undefined,
    60_000,
  );
  const acted = await eventually('the new leader to settle the decision and scale once', async () => {
    const o = await tasks.get(ns, 'freeze');
    return o.status?.lastDecision?.executed === true && o.status.pendingDecision === undefined
      ? o
      : undefined;
  });
  assert.notEqual(acted.status?.lastDecision?.id, paused.decision, 'the new leader decided afresh');
  assert.equal((await deployments.get(ns, 'web')).spec?.replicas, 3);

  leader.child.kill('SIGCONT');
  leader.child.kill('SIGUSR2');
  const code = await eventually('the old leader to notice it lost the lease and exit', () =>
    Promise.resolve(leader.child.exitCode ?? undefined),
  );
  assert.equal(code, 1, 'lost leadership ends the process with 1');
  assert.equal((await deployments.get(ns, 'web')).spec?.replicas, 3, 'the old decision was not acted on');
  const scaleEvents = (await events.list(ns)).items.filter((e) => e.reason === 'ScaleUp');
  assert.equal(scaleEvents.length, 1);
  assert.equal((await tasks.get(ns, 'freeze')).status?.lastDecision?.id, acted.status?.lastDecision?.id);
  assert.ok(
    leader.logs.some((l) => l.msg === 'not leading any more: the remediation stops here'),
    'the old leader stopped at its leadership check',
  );
});
