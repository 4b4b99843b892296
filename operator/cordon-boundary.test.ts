// Integration: the cordon stays within what the AITask's target owns and what its tenant
// may claim, on kwok nodes of this test's own (tainted, so no other test's pods land on
// them). A tenant's bare Pod with the Deployment's labels, placed on another node and older
// than the Deployment's pod (so picked first by labels alone), is never the one whose node
// is cordoned; a second cordon in the same namespace is refused by
// --max-cordoned-nodes-per-namespace; a task deleted without its finalizer leaves a mark the
// sweep finds and releases (the node uncordoned); a cordon an admin lifted and made again
// under the old mark loses the mark and survives the task's deletion.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_BY_ANNOTATION, CORDONED_BY_NAMESPACE_ANNOTATION } from '../api/cordon.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { fakeNode } from '../test/harness/nodes.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, operatorFor, metricsForFile, taskEvents } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';
import type { Node, Pod } from './runtime/kinds.ts';

const metrics = metricsForFile();

interface FullNode extends Node {
  status?: { conditions?: { type: string; status: string }[] };
}

test('CordonNode: owned pods only, a per-namespace cap, orphaned and stale marks released', async (t) => {
  const ns = await freshNamespace('cordon-bound', (fn) => t.after(fn));
  const c = await clients();
  const names = ['a', 'b', 'c'].map((i) => `${ns}-node-${i}`);
  const [nodeA = '', nodeB = '', nodeC = ''] = names;
  const taint = { key: 'aiops.example.com/test', value: ns, effect: 'NoSchedule' };
  t.after(async () => {
    for (const n of names) await c.nodes.delete(undefined, n).catch(() => undefined);
  });
  for (const n of names) {
    const base = fakeNode(n) as FullNode;
    await c.nodes.create(undefined, { ...base, spec: { taints: [taint] } } as FullNode);
  }
  await eventually('the nodes to be Ready', async () => {
    const items = (await c.nodes.list(undefined)).items as FullNode[];
    return names.every((n) =>
      items.some(
        (x) =>
          x.metadata.name === n &&
          x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'),
      ),
    )
      ? true
      : undefined;
  });
  const tolerations = [{ key: taint.key, operator: 'Equal', value: ns, effect: 'NoSchedule' }];
  const pinned = (node: string) => ({ nodeSelector: { 'kubernetes.io/hostname': node }, tolerations });
  // The tenant's decoy: the Deployment's labels, bound straight to node B, older than web's pod.
  await c.pods.create(ns, {
    metadata: { name: 'decoy', labels: { app: 'web' } },
    spec: {
      nodeName: nodeB,
      tolerations,
      containers: [{ name: 'app', image: 'registry.example.com/demo/app:1.0' }],
    },
  } as Pod);
  await new Promise((r) => setTimeout(r, 1100));
  await c.deployments.create(ns, deployment('web', 1, pinned(nodeA)));
  await c.deployments.create(ns, deployment('api', 1, pinned(nodeC)));
  await eventually('three pods Running', async () => {
    const pods = (await c.pods.list(ns)).items.filter((p) => p.status?.phase === 'Running');
    return pods.length === 3 ? true : undefined;
  });
  await metrics.set(`${ns}-web`, 5);
  await metrics.set(`${ns}-api`, 5);
  await operatorFor(ns, metrics.prometheus.url, t, [
    '--max-cordoned-nodes-percent=100',
    '--max-cordoned-nodes-per-namespace=1',
    '--cordon-mark-sweep-interval=2s',
  ]);
  const node = (n: string) => c.nodes.get(undefined, n);
  const cordoned = async (n: string) => (await node(n)).spec?.unschedulable === true;
  const cordonNode = { action: 'CordonNode' as const, cooldownSeconds: 3600 };

  // 1. Only an owned pod's node is cordoned; the mark names the task and its namespace.
  await c.tasks.create(ns, aitask('web', 'web', `${ns}-web`, cordonNode));
  const web = await eventually('the node of web to be cordoned', async () => {
    const o = await c.tasks.get(ns, 'web');
    return (o.status?.cordonedNodes?.length ?? 0) > 0 ? o : undefined;
  });
  assert.deepEqual(web.status?.cordonedNodes, [nodeA], "the Deployment's own pod's node, not the decoy's");
  assert.equal(await cordoned(nodeB), false, "the decoy's node is never cordoned");
  const marks = (await node(nodeA)).metadata.annotations ?? {};
  assert.equal(marks[CORDONED_BY_ANNOTATION], web.metadata.uid);
  assert.equal(marks[CORDONED_BY_NAMESPACE_ANNOTATION], ns);

  // 2. The namespace holds its one cordon: api's is refused by the per-namespace cap.
  await c.tasks.create(ns, aitask('api', 'api', `${ns}-api`, cordonNode));
  const capped = await eventually('api refused by the per-namespace cap', async () => {
    const o = await c.tasks.get(ns, 'api');
    return o.status?.lastDecision?.blockedBy === 'CordonCapReached' ? o : undefined;
  });
  assert.match(capped.status?.lastDecision?.reason ?? '', /--max-cordoned-nodes-per-namespace=1/);
  assert.equal(await cordoned(nodeC), false);
  await c.tasks.patch(ns, 'api', { spec: { paused: true } });
  await eventually('api paused', async () =>
    (await c.tasks.get(ns, 'api')).status?.phase === 'Paused' ? true : undefined,
  );

  // 3. The tenant drops the finalizer and deletes the task: the sweep releases the orphaned mark.
  await c.tasks.patch(ns, 'web', { metadata: { finalizers: null } });
  await c.tasks.delete(ns, 'web');
  await eventually('the orphaned cordon of web lifted by the sweep', async () => {
    const n = await node(nodeA);
    return n.spec?.unschedulable !== true && n.metadata.annotations?.[CORDONED_BY_ANNOTATION] === undefined
      ? true
      : undefined;
  });

  // 4. An admin lifts web2's cordon and cordons again: the stale mark is dropped, the admin's cordon stays.
  await c.tasks.create(ns, aitask('web2', 'web', `${ns}-web`, cordonNode));
  const web2 = await eventually('web2 to cordon node A', async () => {
    const o = await c.tasks.get(ns, 'web2');
    return o.status?.cordonedNodes?.includes(nodeA) === true ? o : undefined;
  });
  assert.equal((await node(nodeA)).metadata.annotations?.[CORDONED_BY_ANNOTATION], web2.metadata.uid);
  await c.nodes.patch(
    undefined,
    nodeA,
    { spec: { unschedulable: null } },
    { fieldManager: 'kubectl-cordon' },
  );
  await c.nodes.patch(
    undefined,
    nodeA,
    { spec: { unschedulable: true } },
    { fieldManager: 'kubectl-cordon' },
  );
  await eventually('the stale mark dropped and web2 no longer listing node A', async () => {
    const o = await c.tasks.get(ns, 'web2');
    const n = await node(nodeA);
    return n.metadata.annotations?.[CORDONED_BY_ANNOTATION] === undefined &&
      !(o.status?.cordonedNodes ?? []).includes(nodeA)
      ? true
      : undefined;
  });
  assert.equal(await cordoned(nodeA), true, "the admin's cordon stays");
  await eventually('the CordonMarkDropped Event', async () =>
    (await taskEvents(ns, 'web2')).some((e) => e.reason === 'CordonMarkDropped') ? true : undefined,
  );
  await c.tasks.delete(ns, 'web2');
  await eventually('web2 to be gone', async () =>
    c.tasks.get(ns, 'web2').then(
      () => undefined,
      () => true,
    ),
  );
  assert.equal(await cordoned(nodeA), true, "deleting web2 does not lift the admin's cordon");
  assert.equal(await cordoned(nodeB), false);
  assert.equal(await cordoned(nodeC), false);
});
