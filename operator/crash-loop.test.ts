// Integration: crash safety under kill -9. Ten AITasks each intend exactly one ScaleUp
// (maxAttempts 1, long cooldown); the operator is SIGKILLed at staggered moments after it
// becomes ready, again and again, so some kills land between "decision written" and
// "outcome recorded". A last operator then runs to the end. Every Deployment must have been
// scaled exactly once: a decision found in effect is recorded, one not in effect runs once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshNamespace, testKubeconfig } from '../test/support/cluster.ts';
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

const TASKS = 10;
const KILLS = [0, 40, 80, 120, 160, 200, 250, 300, 400, 600];

test('kill -9 in a loop while deciding and acting: every intended action happens exactly once', async (t) => {
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
  for (const delay of KILLS) {
    const op = await startOperatorProcess(testKubeconfig(), args);
    await new Promise((r) => setTimeout(r, delay));
    await op.kill();
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
  for (const name of names) {
    assert.equal((await c.deployments.get(ns, name)).spec?.replicas, 3, `${name}: scaled exactly once`);
    const o = await c.tasks.get(ns, name);
    assert.equal(o.status?.attempts, 1, `${name}: one attempt`);
    const mine = events.filter((e) => e.regarding.name === name);
    assert.ok(mine.filter((e) => e.reason === 'ScaleUp').length <= 1, `${name}: at most one ScaleUp Event`);
  }
  const settled = events.filter((e) =>
    ['DecisionVerified', 'DecisionInterrupted', 'DecisionUnverified'].includes(e.reason),
  );
  t.diagnostic(
    `interrupted decisions settled after a kill: ${settled.map((e) => e.reason).join(', ') || 'none'}`,
  );
});
