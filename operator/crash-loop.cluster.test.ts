// Integration: crash safety under kill -9, with every kill inside the crash window. Six
// AITasks each intend exactly one ScaleUp (maxAttempts 1, long cooldown). The operator runs
// with the test hook AIOPS_TEST_PAUSE_AT (operator/action-gate.ts), which stops a
// remediation between writing the decision and acting (`before-action`) or between acting
// and recording the outcome (`after-action`); the test waits for the pause, kill -9s the
// process there, checks the cluster shows the interrupted decision, and starts the next one.
// A last operator without the hook runs to the end. Every Deployment must have been scaled
// exactly once, and every interrupted decision settled: not in effect → dropped and run
// once (DecisionInterrupted), in effect → recorded, not repeated (DecisionVerified).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAUSE_ENV, type ActionPoint } from './action-gate.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess } from '../test/support/operator.ts';
import {
  aitask,
  clients,
  GAUGE,
  operatorFor,
  metricsForFile,
  taskEvents,
} from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';

const metrics = metricsForFile();

const TASKS = 6;
const KILLS: readonly ActionPoint[] = ['before-action', 'after-action', 'before-action', 'after-action'];

test('kill -9 inside the crash window, again and again: every interrupted decision is settled and every action happens exactly once', async (t) => {
  const ns = await freshNamespace('crash-loop', (fn) => t.after(fn));
  const c = await clients();
  const names = Array.from({ length: TASKS }, (_, i) => `t${i}`);
  for (const name of names) {
    await c.deployments.create(ns, deployment(name, 2));
    metrics.exporter.set(GAUGE, { series: `${ns}-${name}` }, 5);
  }
  await metrics.set(`${ns}-t0`, 5);
  for (const name of names)
    await c.tasks.create(
      ns,
      aitask(name, name, `${ns}-${name}`, {
        action: 'ScaleUp',
        scale: { maxReplicas: 10 },
        cooldownSeconds: 3600,
        maxAttempts: 1,
      }),
    );
  const args = [
    `--namespace=${ns}`,
    `--prometheus-url=${metrics.prometheus.url}`,
    '--max-concurrent-reconciles=4',
  ];
  const interrupted = new Set<string>();
  const verified = new Set<string>();
  for (const point of KILLS) {
    const op = await startOperatorProcess(args, { [PAUSE_ENV]: point });
    const paused = await eventually(`a remediation paused at ${point}`, () =>
      Promise.resolve(op.logs.find((l) => l.msg === 'paused for a crash test')),
    );
    await op.kill();
    const decision = String(paused.decision);
    const items = (await c.tasks.list(ns)).items;
    const task = items.find((o) => o.status?.pendingDecision?.id === decision);
    assert.ok(task, `decision ${decision} is in flight on the cluster after the kill at ${point}`);
    const name = task.metadata.name ?? '';
    const replicas = (await c.deployments.get(ns, name)).spec?.replicas;
    if (point === 'before-action') {
      assert.equal(replicas, 2, `${name}: killed before the action, not scaled`);
      interrupted.add(name);
    } else {
      assert.equal(replicas, 3, `${name}: killed after the action, before its outcome`);
      verified.add(name);
    }
  }
  await operatorFor(ns, metrics.prometheus.url, t, ['--max-concurrent-reconciles=4']);
  await eventually(
    'every AITask to have acted once and then stalled',
    async () => {
      const items = (await c.tasks.list(ns)).items;
      return items.every((o) => o.status?.phase === 'Failed' && o.status.pendingDecision === undefined)
        ? true
        : undefined;
    },
    120_000,
  );
  const events = await taskEvents(ns);
  const count = (name: string, reason: string): number =>
    events.filter((e) => e.regarding.name === name && e.reason === reason).length;
  for (const name of names) {
    assert.equal((await c.deployments.get(ns, name)).spec?.replicas, 3, `${name}: scaled exactly once`);
    const o = await c.tasks.get(ns, name);
    assert.equal(o.status?.attempts, 1, `${name}: one attempt`);
    assert.equal(
      count(name, 'ScaleUp') + count(name, 'DecisionVerified'),
      1,
      `${name}: the one ScaleUp is recorded once (by its outcome or by settling it)`,
    );
  }
  for (const name of interrupted)
    assert.ok(
      count(name, 'DecisionInterrupted') >= 1,
      `${name}: the decision killed before acting was settled`,
    );
  for (const name of verified)
    assert.ok(count(name, 'DecisionVerified') >= 1, `${name}: the decision killed after acting was verified`);
});
