// Attacks on CordonNode, the action whose effect reaches past the tenant's namespace: a
// cordon stops scheduling for everyone on the node. Played by mallory with her own token
// against the operator under the CSV's RBAC, on four kwok nodes: the node cordoned is always
// the node of a pod her Deployment owns, her own namespace's share of cordons is capped, her
// cordon never outlives her task however she deletes it, and a node an admin cordoned after
// hers is never lifted on her behalf. Every test ends with every node as it began, alice's
// task still following her changes and the operator process the one that started.

import { kubectlWith } from '../harness/kubectl.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_BY_ANNOTATION } from '../../api/cordon.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { nodeName } from '../harness/nodes.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { LOAD } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage({ nodes: 4, args: ['--max-cordoned-nodes-percent=75'] });

const ns = (): string => stage.mallory.namespace;
/** `kubectl <verb> <node>` as the cluster admin types it (its own field manager, kubectl-cordon). */
const admin = (verb: 'cordon' | 'uncordon', node: string): void => {
  kubectlWith(stage.cluster.kubeconfigPath)([verb, node]);
};
const cordoned = async (node: string): Promise<boolean> =>
  (await stage.nodes.get(undefined, node)).spec?.unschedulable === true;

/** Mallory's Deployment `name` of one pod pinned to `node`, breaching its task's threshold. */
async function pinnedDeployment(name: string, node: string): Promise<void> {
  await stage.mallory.deployments.create(
    ns(),
    deployment(name, 1, { nodeSelector: { 'kubernetes.io/hostname': node } }),
  );
  stage.exporter.set(LOAD, { namespace: ns(), deployment: name }, 5);
  await eventually(`${name}'s pod Running on ${node}`, async () => {
    const pods = (await stage.mallory.pods.list(ns())).items;
    return pods.some(
      (p) =>
        p.metadata.labels?.['app'] === name && p.spec?.nodeName === node && p.status?.phase === 'Running',
    )
      ? true
      : undefined;
  });
}

/** Mallory's CordonNode task on Deployment `target`, breached at once. */
function cordonTask(name: string, target: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name: target },
      trigger: { query: `max(${LOAD}{deployment="${target}"})`, threshold: 1 },
      remediation: { action: 'CordonNode', cooldownSeconds: 3600 },
      intervalSeconds: 10,
    },
  };
}

async function deleteTask(name: string): Promise<void> {
  await stage.mallory.tasks.delete(ns(), name);
  await eventually(
    `${name} to be gone`,
    () =>
      stage.mallory.tasks.get(ns(), name).then(
        () => undefined,
        () => true,
      ),
    60_000,
  );
}

async function cordonedFor(task: string, node: string): Promise<void> {
  await eventually(`${task} to cordon ${node}`, async () => {
    const t = await stage.mallory.tasks.get(ns(), task);
    return t.status?.cordonedNodes?.includes(node) === true && (await cordoned(node)) ? true : undefined;
  });
}

test('CordonNode and then deletion complete under the shipped RBAC: the node is lifted, the task is gone', async () => {
  await pinnedDeployment('web', nodeName(0));
  await stage.mallory.tasks.create(ns(), cordonTask('web', 'web'));
  await cordonedFor('web', nodeName(0));
  await deleteTask('web');
  assert.equal(await cordoned(nodeName(0)), false, 'the finalizer uncordoned it');
  await undisturbed();
});

test("a bare Pod carrying the Deployment's labels cannot steer the cordon to another node", async () => {
  // Created first, so it is the oldest pod matching the selector.
  const decoy = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'decoy', labels: { app: 'steer' } },
    spec: {
      nodeName: nodeName(1),
      containers: [{ name: 'app', image: 'registry.example.com/demo/app:1.0' }],
    },
  };
  await stage.mallory.pods.create(ns(), decoy);
  await pinnedDeployment('steer', nodeName(0));
  await stage.mallory.tasks.create(ns(), cordonTask('steer', 'steer'));
  await cordonedFor('steer', nodeName(0));
  assert.equal(await cordoned(nodeName(1)), false, "the decoy's node is never cordoned");
  await deleteTask('steer');
  await stage.mallory.pods.delete(ns(), 'decoy');
  assert.equal(await cordoned(nodeName(0)), false);
  await undisturbed();
});

test("one namespace cordons at most its share of nodes, whatever the cluster's cap allows", async () => {
  await pinnedDeployment('a', nodeName(2));
  await pinnedDeployment('b', nodeName(3));
  await stage.mallory.tasks.create(ns(), cordonTask('a', 'a'));
  await cordonedFor('a', nodeName(2));
  await stage.mallory.tasks.create(ns(), cordonTask('b', 'b'));
  await eventually('b to be refused by a cap', async () => {
    const t = await stage.mallory.tasks.get(ns(), 'b');
    return t.status?.lastDecision?.blockedBy !== undefined ? t : undefined;
  });
  assert.equal(await cordoned(nodeName(3)), false, 'the second node of the same namespace stays schedulable');
  await deleteTask('b');
  await deleteTask('a');
  assert.equal(await cordoned(nodeName(2)), false);
  await undisturbed();
});

test('a cordon outlives no task: dropping the finalizer before deleting still lifts it', async () => {
  await pinnedDeployment('left', nodeName(0));
  await stage.mallory.tasks.create(ns(), cordonTask('orphan', 'left'));
  await cordonedFor('orphan', nodeName(0));
  await stage.mallory.tasks.removeFinalizer(ns(), 'orphan');
  await stage.mallory.tasks.delete(ns(), 'orphan');
  await eventually(
    'the orphaned cordon of node 0 to be lifted',
    async () => {
      const node = await stage.nodes.get(undefined, nodeName(0));
      const marked = node.metadata.annotations?.[CORDONED_BY_ANNOTATION] !== undefined;
      return node.spec?.unschedulable !== true && !marked ? true : undefined;
    },
    150_000,
  );
  await undisturbed();
});

test("a mark whose cordon an admin lifted never lifts the admin's later cordon", async () => {
  await pinnedDeployment('stale', nodeName(0));
  await stage.mallory.tasks.create(ns(), cordonTask('stale', 'stale'));
  await cordonedFor('stale', nodeName(0));
  admin('uncordon', nodeName(0));
  await new Promise((r) => setTimeout(r, 2000));
  admin('cordon', nodeName(0));
  await deleteTask('stale');
  assert.equal(await cordoned(nodeName(0)), true, "the admin's cordon stays");
  admin('uncordon', nodeName(0));
  await eventually('no mark of ours left on node 0', async () => {
    const node = await stage.nodes.get(undefined, nodeName(0));
    return node.metadata.annotations?.[CORDONED_BY_ANNOTATION] === undefined ? true : undefined;
  });
  await undisturbed();
});
