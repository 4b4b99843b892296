// Attacks on manual approval: an admin reviews the decision an AITask waits on
// and approves its id; in the same moment the tenant points spec.target.name at another
// Deployment, or deletes the pod a RestartPod named so that another is chosen. The approved id
// must not execute against the other Deployment or pod: the approval is void (an
// ApprovalIgnored Event says what changed), nothing is acted on, and the decision is made
// again under a new id, waiting for a new approval. The operator runs under the shipped RBAC
// (operatorFor).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { freshNamespace } from '../support/cluster.ts';
import { eventually } from '../support/operator.ts';
import { aitask, clients, metricsForFile, operatorFor, taskEvents } from '../support/remediation.ts';
import { deployment } from '../support/workloads.ts';

const metrics = metricsForFile();

void test('an approval does not follow a target switched after the review', async (t) => {
  const ns = await freshNamespace('attack-approval', (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 2));
  await c.deployments.create(ns, deployment('other', 2));
  await metrics.set(ns, 5);
  await c.tasks.create(
    ns,
    aitask(
      'manual',
      'web',
      ns,
      { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 3600 },
      { approval: 'Manual' },
    ),
  );
  await operatorFor(ns, metrics.prometheus.url, t);
  const until = (what: string, check: (o: v2.AITask) => boolean): Promise<v2.AITask> =>
    eventually(
      what,
      async () => {
        const o = await c.tasks.get(ns, 'manual');
        return check(o) ? o : undefined;
      },
      60_000,
    );
  const reviewed = await until(
    'a decision waiting for approval',
    (o) => o.status?.phase === 'AwaitingApproval',
  );
  const shown = reviewed.status?.pendingDecision;
  assert.ok(shown);
  const web = await c.deployments.get(ns, 'web');
  assert.deepEqual(shown.target, { namespace: ns, name: 'web', uid: web.metadata.uid });
  assert.equal(shown.generation, 1);

  await c.tasks.patch(ns, 'manual', {
    metadata: { annotations: { [APPROVE_ANNOTATION]: shown.id } },
    spec: { target: { name: 'other' } },
  });
  const remade = await until(
    'the approval consumed and a new decision waiting for the new target',
    (o) =>
      o.metadata.annotations?.[APPROVE_ANNOTATION] === undefined &&
      o.status?.pendingDecision?.target?.name === 'other' &&
      o.status.pendingDecision.blockedBy === 'AwaitingApproval',
  );
  assert.notEqual(remade.status?.pendingDecision?.id, shown.id);
  assert.equal(remade.status?.pendingDecision?.generation, 2);
  const ignored = await eventually('the ApprovalIgnored Event', async () =>
    (await taskEvents(ns, 'manual')).find((e) => e.reason === 'ApprovalIgnored'),
  );
  assert.match(ignored.note, new RegExp(`target changed from Deployment ${ns}/web to ${ns}/other`));
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal((await c.deployments.get(ns, 'other')).spec?.replicas, 2, 'the other Deployment was scaled');
  assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 2, 'the reviewed Deployment was scaled');
  assert.ok(
    !(await taskEvents(ns, 'manual')).some((e) => e.reason === 'ThresholdBreached'),
    'a decision to act was made',
  );
});

void test('an approved RestartPod does not evict another pod than the one it named', async (t) => {
  const ns = await freshNamespace('attack-approval-pod', (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 1));
  const livePods = async (): Promise<string[]> =>
    (await c.pods.list(ns)).items
      .filter((p) => p.metadata.deletionTimestamp === undefined)
      .map((p) => p.metadata.name ?? '');
  await eventually('one pod', async () => ((await livePods()).length === 1 ? true : undefined));
  await metrics.set(ns, 5);
  // An hour between evaluations: only the approval itself makes the operator look again.
  await c.tasks.create(
    ns,
    aitask(
      'manual',
      'web',
      ns,
      { action: 'RestartPod', cooldownSeconds: 3600 },
      { approval: 'Manual', intervalSeconds: 3600 },
    ),
  );
  await operatorFor(ns, metrics.prometheus.url, t);
  const reviewed = await eventually('a RestartPod waiting for approval, naming its pod', async () => {
    const o = await c.tasks.get(ns, 'manual');
    return o.status?.pendingDecision?.effect?.pod !== undefined ? o : undefined;
  });
  const shown = reviewed.status?.pendingDecision;
  assert.ok(shown?.effect?.pod);
  assert.deepEqual(await livePods(), [shown.effect.pod], 'the decision names the one pod');

  await c.pods.delete(ns, shown.effect.pod);
  const replacement = await eventually('the ReplicaSet to make another pod', async () => {
    const pods = await livePods();
    return pods.length === 1 && pods[0] !== shown.effect?.pod ? pods[0] : undefined;
  });
  await c.tasks.patch(ns, 'manual', { metadata: { annotations: { [APPROVE_ANNOTATION]: shown.id } } });
  const remade = await eventually('the approval consumed and a decision naming the new pod', async () => {
    const o = await c.tasks.get(ns, 'manual');
    const pending = o.status?.pendingDecision;
    return o.metadata.annotations?.[APPROVE_ANNOTATION] === undefined &&
      pending?.blockedBy === 'AwaitingApproval' &&
      pending.effect?.pod === replacement
      ? pending
      : undefined;
  });
  assert.notEqual(remade.id, shown.id);
  const ignored = await eventually('the ApprovalIgnored Event', async () =>
    (await taskEvents(ns, 'manual')).find((e) => e.reason === 'ApprovalIgnored'),
  );
  assert.match(ignored.note, new RegExp(`pod chosen changed from ${shown.effect.pod} to ${replacement}`));
  assert.deepEqual(await livePods(), [replacement], 'the new pod was not evicted');
  assert.ok(
    !(await taskEvents(ns, 'manual')).some((e) => e.reason === 'RestartPod'),
    'no RestartPod was run',
  );
});
