// Attack on the node reads of CordonNode evaluations: while the cordon cap
// is full, every evaluation of a breaching CordonNode task is refused (CordonCapReached), and
// each could list every node to find that out. Mallory keeps twenty such tasks breaching;
// the operator reads the nodes from one list shared by all of them per period, so the node
// LISTs the apiserver counts follow the clock, not the number of tasks or evaluations, and a
// refused task comes back at its interval like any other requeue. Played with mallory's own
// token against the operator under the CSV's RBAC and in a memory cgroup of its shipped limit.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubectlWith } from '../harness/kubectl.ts';
import { nodeName } from '../harness/nodes.ts';
import { NODE_SNAPSHOT_MAX_AGE_MS } from '../../operator/edges/node-snapshots.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

/** The tasks' interval, in seconds (the schema's least). */
const INTERVAL_S = 10;
const TASKS = 20;

// Four nodes, at most a quarter unschedulable: the admin's cordon of one fills the cap.
const { stage, undisturbed } = useStage({
  nodes: 4,
  args: ['--max-cordoned-nodes-percent=25'],
  setup: (s) => {
    kubectlWith(s.cluster.kubeconfigPath)(['cordon', nodeName(3)]);
  },
});

test('twenty breaching CordonNode tasks refused by a full cap list the nodes once per period, not once per evaluation', async (t) => {
  const ns = stage.mallory.namespace;
  const names = Array.from({ length: TASKS }, (_, i) => `c${i}`);
  for (const name of names) {
    await stage.mallory.deployments.create(ns, deployment(name, 1));
    stage.exporter.set(LOAD, { namespace: ns, deployment: name }, 5);
  }
  await eventually('every pod scheduled', async () => {
    const pods = (await stage.mallory.pods.list(ns)).items;
    return pods.filter((p) => p.spec?.nodeName !== undefined).length >= TASKS ? true : undefined;
  });
  for (const name of names)
    await stage.mallory.tasks.create(
      ns,
      loadTask(
        name,
        { action: 'CordonNode', cooldownSeconds: 0, maxAttempts: 100 },
        { intervalSeconds: INTERVAL_S },
      ),
    );
  const refusals = () =>
    stage.operator.metric('aiops_guardrail_refusals_total', { reason: 'CordonCapReached' });
  const reconciles = () => stage.operator.metric('controller_runtime_reconcile_total');
  const lists = () => apiserverRequests(stage.admin, { resource: 'nodes', verb: 'LIST' });
  await eventually(
    `${TASKS} CordonCapReached refusals`,
    async () => ((await refusals()) >= TASKS ? true : undefined),
    120_000,
  );

  const start = Date.now();
  const [lists0, refusals0, reconciles0] = [await lists(), await refusals(), await reconciles()];
  const evaluations = 3 * TASKS;
  await eventually(
    `${evaluations} more refused evaluations`,
    async () => ((await refusals()) - refusals0 >= evaluations ? true : undefined),
    180_000,
  );
  const [lists1, reconciles1] = [await lists(), await reconciles()];
  const periods = Math.ceil((Date.now() - start) / NODE_SNAPSHOT_MAX_AGE_MS);
  const nodeLists = lists1 - lists0;
  t.diagnostic(
    `${nodeLists} node LISTs and ${reconciles1 - reconciles0} reconciles over ${periods} periods (${Date.now() - start} ms)`,
  );
  assert.ok(
    nodeLists <= periods + 2,
    `${nodeLists} node LISTs over ${periods} periods of ${NODE_SNAPSHOT_MAX_AGE_MS} ms while ${evaluations}+ evaluations were refused (at most one per period, plus two)`,
  );
  // Paced: each task comes back at its interval, never in a loop of refusals (alice's task too).
  const intervals = Math.ceil((Date.now() - start) / (INTERVAL_S * 1000));
  const bound = (TASKS + 1) * (intervals + 2);
  assert.ok(
    reconciles1 - reconciles0 <= bound,
    `${reconciles1 - reconciles0} reconciles over ${intervals} intervals of ${INTERVAL_S}s for ${TASKS + 1} tasks (at most ${bound})`,
  );
  for (const name of names) {
    const t = await stage.mallory.tasks.get(ns, name);
    assert.equal(t.status?.cordonedNodes, undefined, `${name} cordoned nothing`);
  }
  await undisturbed();
});
