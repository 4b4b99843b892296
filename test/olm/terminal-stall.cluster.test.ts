// An error no retry can fix is reported once, not retried hot: the operator runs as a
// ServiceAccount holding the committed CSV's permissions minus one rule (the spec history's
// ControllerRevisions), so every reconcile of a new generation is Forbidden. The AITask must
// show Stalled=True with reason Forbidden, a spec change must be reconciled (and stall
// again), and across both the operator must have reconciled a handful of times, counted by
// its /metrics reconcile counters, where the old hot backoff (5 ms doubling) ran dozens.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { PolicyRule } from '../../api/rbac.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { Resources, type Deployment } from '../../operator/runtime/kinds.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import { eventually, startOperatorProcess } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { csvInstallSpec, installAsOLM } from './install-as-olm.ts';

test('a Forbidden request stalls the AITask (condition Stalled, reason Forbidden) instead of a hot retry loop', async (t) => {
  const after = (fn: () => Promise<void>): void => {
    t.after(fn);
  };
  const admin = await testTransport();
  const installNs = await freshNamespace('stall-install', after);
  const appNs = await freshNamespace('stall-app', after);
  const dir = mkdtempSync(join(tmpdir(), 'aiops-stall-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const withoutHistory = (rules: PolicyRule[]): PolicyRule[] =>
    rules.filter((r) => !r.resources.includes('controllerrevisions'));
  const kubeconfig = await installAsOLM(
    admin,
    testKubeconfig(),
    installNs,
    csvInstallSpec(),
    dir,
    after,
    withoutHistory,
  );
  await new ResourceClient<Deployment>(admin, Resources.deployments).create(appNs, deployment('web', 1));
  const tasks = await testAITasks('v2');
  await tasks.create(appNs, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'stall' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 10,
    },
  });
  const op = await startOperatorProcess(
    [
      `--namespace=${appNs}`,
      '--prometheus-url=http://127.0.0.1:9',
      '--leader-elect',
      `--leader-election-namespace=${installNs}`,
    ],
    {},
    { kubeconfig },
  );
  t.after(async () => {
    await op.stop();
  });
  const stalledAt = async (generation: number) =>
    eventually(`Stalled=True (Forbidden) for generation ${generation}`, async () => {
      const o = await tasks.get(appNs, 'stall');
      const c = o.status?.conditions?.find((x) => x.type === 'Stalled');
      return o.status?.observedGeneration === generation && c?.status === 'True' && c.reason === 'Forbidden'
        ? { task: o, condition: c }
        : undefined;
    });
  const first = await stalledAt(1);
  assert.equal(first.task.status?.phase, 'Failed');
  assert.match(first.condition.message, /controllerrevisions/, 'the condition names the refused request');

  await tasks.patch(appNs, 'stall', { spec: { intervalSeconds: 11 } });
  await stalledAt(2);
  // The counter moves when a reconcile returns, just after its status write: wait for it.
  const reconciles = await eventually('the spec change counted as a reconcile', async () => {
    const n = await op.metric('controller_runtime_reconcile_total');
    return n >= 2 ? n : undefined;
  });
  assert.ok(reconciles <= 5, `no hot retry loop: ${reconciles} reconciles for two generations`);
  // Stalling is not a reconcile error. A write conflict (CI met one between the first-sight
  // write and the stall's) is a requeue, retried with backoff and logged at debug level.
  assert.equal(
    await op.metric('controller_runtime_terminal_reconcile_errors_total', { controller: 'aitask' }),
    0,
    'the Forbidden request stalled the task instead of failing the reconcile',
  );
  const retried = op.logs.filter((l) => l['msg'] === 'reconcile failed, retrying');
  assert.deepEqual(retried, [], 'no reconcile failed for another reason than a write conflict');
});
