// Integration, a seed behaviour on the real apiserver: a status write that meets a 409 is
// requeued with backoff and lands. The 409s are real: the operator runs with the crash tests'
// hook (AIOPS_TEST_PAUSE_AT=before-decision, operator/action-gate.ts), which holds a
// remediation after it read the AITask and before it writes the decision; while it is held,
// another client (the test) changes the AITask, so the operator's resourceVersion-bound PUT of
// the status is refused. Twice; the third time nobody interferes. The decision then lands: the
// Deployment is scaled exactly once, status records the executed ScaleUp for the current
// generation, and the conflicts show in the operator's request counter (409 on PUT), its
// retries and its debug log, with the retry count growing between them (per-key backoff),
// counted as requeues and never as reconcile errors (a tenant's writes can cause them).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAUSE_ENV } from './action-gate.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess } from '../test/support/operator.ts';
import { aitask, clients, metricsForFile } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';

const metrics = metricsForFile();

/** Conflicts the test causes before it lets a decision through. */
const CONFLICTS = 2;

test('a status write that meets a 409 from a concurrent writer is requeued with backoff and lands', async (t) => {
  const ns = await freshNamespace('seed-conflict', (fn) => t.after(fn));
  const c = await clients();
  const key = `${ns}/web`;
  await c.deployments.create(ns, deployment('web', 2));
  await metrics.set(ns, 5);
  await c.tasks.create(
    ns,
    aitask('web', 'web', ns, { action: 'ScaleUp', scale: { maxReplicas: 5 }, cooldownSeconds: 3600 }),
  );
  const op = await startOperatorProcess(
    [`--namespace=${ns}`, `--prometheus-url=${metrics.prometheus.url}`, '--zap-log-level=debug'],
    { [PAUSE_ENV]: 'before-decision' },
  );
  t.after(async () => {
    await op.stop();
  });

  const conflicts = () => op.logs.filter((l) => l.msg === 'reconcile conflict, retrying' && l.key === key);
  let handled = 0;
  let bumps = 0;
  const landed = await eventually(
    'the decision to land after the conflicts',
    async () => {
      const pauses = op.logs.filter((l) => l.msg === 'paused for a crash test');
      for (; handled < pauses.length; handled++) {
        const seen = conflicts().length;
        // The concurrent writer: the object changes while the operator holds what it read.
        const bump = bumps < CONFLICTS;
        if (bump)
          await c.tasks.patch(ns, 'web', { metadata: { labels: { 'aiops-test/bump': String(++bumps) } } });
        if (op.child.pid !== undefined) process.kill(op.child.pid, 'SIGUSR2');
        if (bump)
          await eventually(`the 409 after bump ${bumps}`, () =>
            conflicts().length > seen ? true : undefined,
          );
      }
      const o = await c.tasks.get(ns, 'web');
      return o.status?.lastDecision?.executed === true && o.status.pendingDecision === undefined
        ? o
        : undefined;
    },
    120_000,
  );
  assert.equal(landed.status?.lastDecision?.action, 'ScaleUp');
  assert.equal(
    landed.status.observedGeneration,
    landed.metadata.generation,
    'status is for the current spec',
  );
  assert.equal(
    landed.metadata.labels?.['aiops-test/bump'],
    String(CONFLICTS),
    "the other writer's change stays",
  );
  assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 3, 'scaled exactly once');

  const seen = conflicts();
  assert.ok(seen.length >= CONFLICTS, `${seen.length} conflicts logged`);
  for (const l of seen) assert.match(String(l.error), /the object has been modified/);
  const retries = seen.map((l) => Number(l.retries));
  assert.deepEqual(
    retries,
    retries.map((_, i) => i),
    'each conflict came after the one before without a success between: the backoff grew',
  );
  assert.ok((await op.metric('rest_client_requests_total', { code: '409', method: 'PUT' })) >= CONFLICTS);
  assert.ok((await op.metric('workqueue_retries_total')) >= CONFLICTS, 'requeued with backoff');
  assert.equal(
    await op.metric('controller_runtime_reconcile_errors_total'),
    0,
    'a conflict is not a reconcile error: whoever writes the object can cause one',
  );
  assert.ok(
    (await op.metric('controller_runtime_reconcile_total', { result: 'requeue' })) >= seen.length,
    'each conflict counted as a requeue',
  );
});
