// Integration: CordonNode end to end on kwok nodes of this test's own (tainted, so no other
// test's pods land on them): the worst pod's node is cordoned, marked with the AITask's UID
// and recorded; the cordon cap refuses a second node; deleting the AITask uncordons exactly
// its node, while a node cordoned by someone else stays cordoned even when the AITask's
// status is made to list it (status is not trusted: only the mark on the node is).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_BY_ANNOTATION } from '../api/cordon.ts';
import { findCondition, metaTime } from '../api/status/conditions.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { fakeNode } from '../test/harness/nodes.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, operatorFor, metricsForFile, taskEvents } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';
import type { Node } from './runtime/kinds.ts';

const metrics = metricsForFile();

interface FullNode extends Node {
  status?: { conditions?: { type: string; status: string }[] };
}

test('CordonNode: cordons and records the node, respects the cap, uncordons only its own node on deletion', async (t) => {
  const ns = await freshNamespace('cordon', (fn) => t.after(fn));
  const c = await clients();
  const names = [0, 1, 2].map((i) => `${ns}-node-${i}`);
  const taint = { key: 'aiops.example.com/test', value: ns, effect: 'NoSchedule' };
  t.after(async () => {
    for (const n of names) await c.nodes.delete(undefined, n).catch(() => undefined);
  });
  for (const n of names) {
    const base = fakeNode(n) as FullNode & { metadata: { labels: Record<string, string> } };
    await c.nodes.create(undefined, {
      ...base,
      metadata: { ...base.metadata, labels: { ...base.metadata.labels, 'aiops-test': ns } },
      spec: { taints: [taint] },
    } as FullNode);
  }
  const [mine = '', someoneElses = '', third = ''] = names;
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
  await c.nodes.patch(undefined, someoneElses, { spec: { unschedulable: true } });
  const pinned = (node: string) => ({
    nodeSelector: { 'kubernetes.io/hostname': node },
    tolerations: [{ key: taint.key, operator: 'Equal', value: ns, effect: 'NoSchedule' }],
  });
  await c.deployments.create(ns, deployment('web', 1, pinned(mine)));
  await c.deployments.create(ns, deployment('api', 1, pinned(third)));
  await eventually('both pods Running on their nodes', async () => {
    const pods = (await c.pods.list(ns)).items.filter((p) => p.status?.phase === 'Running');
    return pods.length === 2 ? true : undefined;
  });
  await metrics.set(`${ns}-web`, 5);
  await metrics.set(`${ns}-api`, 5);

  const nodes = (await c.nodes.list(undefined)).items;
  const cordoned = nodes.filter((n) => n.spec?.unschedulable === true).length;
  const pct = Math.ceil((100 * (cordoned + 1)) / nodes.length);
  const claim = await c.tasks.create(
    ns,
    aitask('claim', 'ghost', `${ns}-ghost`, { action: 'CordonNode', cooldownSeconds: 3600 }),
  );
  await c.tasks.replaceStatus({
    ...claim,
    status: {
      phase: 'Healing',
      pendingDecision: {
        id: 'claim-1',
        action: 'CordonNode',
        source: 'rules',
        reason: 'threshold > 1 breached: CordonNode',
        executed: false,
        at: metaTime(new Date()),
        effect: { pod: 'gone', node: someoneElses },
      },
    },
  });
  await operatorFor(ns, metrics.prometheus.url, t, [`--max-cordoned-nodes-percent=${pct}`]);
  const node = async (n: string) => (await c.nodes.get(undefined, n)).spec?.unschedulable === true;
  const settled = await eventually('the interrupted cordon of claim to be settled', async () => {
    const o = await c.tasks.get(ns, 'claim');
    return o.status?.pendingDecision === undefined && o.status?.lastDecision !== undefined ? o : undefined;
  });
  assert.equal(
    settled.status?.lastDecision?.blockedBy,
    'Interrupted',
    "someone else's cordon is not its effect",
  );
  assert.equal(settled.status.cordonedNodes, undefined, "someone else's node is not claimed");

  await c.tasks.create(
    ns,
    aitask('web', 'web', `${ns}-web`, { action: 'CordonNode', cooldownSeconds: 3600 }),
  );
  const web = await eventually('the node of web to be cordoned and recorded', async () => {
    const o = await c.tasks.get(ns, 'web');
    return o.status?.cordonedNodes?.includes(mine) === true ? o : undefined;
  });
  assert.deepEqual(web.status?.cordonedNodes, [mine]);
  assert.equal(await node(mine), true);
  const marked = await c.nodes.get(undefined, mine);
  assert.equal(
    marked.metadata.annotations?.[CORDONED_BY_ANNOTATION],
    web.metadata.uid,
    'marked with its UID',
  );
  await eventually('the CordonNode Event', async () =>
    (await taskEvents(ns, 'web')).some((e) => e.reason === 'CordonNode') ? true : undefined,
  );

  await c.tasks.create(
    ns,
    aitask('api', 'api', `${ns}-api`, { action: 'CordonNode', cooldownSeconds: 3600 }),
  );
  const capped = await eventually('the second cordon to be refused by the cap', async () => {
    const o = await c.tasks.get(ns, 'api');
    return o.status?.lastDecision?.blockedBy === 'CordonCapReached' ? o : undefined;
  });
  assert.equal(findCondition(capped.status?.conditions, 'RemediationAllowed')?.reason, 'CordonCapReached');
  assert.equal(capped.status?.cordonedNodes, undefined);
  assert.equal(await node(third), false, 'the cap was never exceeded');
  await eventually('the CordonCapReached Event', async () =>
    (await taskEvents(ns, 'api')).some((e) => e.reason === 'CordonCapReached') ? true : undefined,
  );

  await c.tasks.patch(ns, 'api', { spec: { paused: true } });
  await eventually('api paused', async () =>
    (await c.tasks.get(ns, 'api')).status?.phase === 'Paused' ? true : undefined,
  );
  await c.tasks.patchStatus(ns, 'web', { cordonedNodes: [mine, someoneElses] });
  await c.tasks.delete(ns, 'web');
  await eventually('web to be gone', async () =>
    c.tasks.get(ns, 'web').then(
      () => undefined,
      () => true,
    ),
  );
  assert.equal(await node(mine), false, 'its own node is uncordoned');
  assert.equal(
    (await c.nodes.get(undefined, mine)).metadata.annotations?.[CORDONED_BY_ANNOTATION],
    undefined,
  );
  assert.equal(await node(someoneElses), true, "someone else's cordon stays, though web's status listed it");
  const refused = (await taskEvents(ns, 'web')).find((e) => e.reason === 'UncordonRefused');
  assert.ok(refused, 'the finalizer says which listed node it left');
  assert.match(refused.note, new RegExp(`left ${someoneElses} as they are`));
  assert.equal(await node(third), false);
  await c.tasks.delete(ns, 'api');
  await c.tasks.delete(ns, 'claim');
  await eventually('api and claim to be gone', async () =>
    (await c.tasks.list(ns)).items.length === 0 ? true : undefined,
  );
  assert.equal(await node(someoneElses), true, 'still cordoned after every AITask is gone');
});
