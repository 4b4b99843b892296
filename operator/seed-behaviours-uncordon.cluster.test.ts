// Integration, a seed behaviour on the real apiserver: an uncordon the finalizer cannot make
// keeps the AITask's finalizer (the task stays Terminating, the node stays cordoned and
// marked) and is tried again until it succeeds. The fault is real, injected in the
// apiserver's admission chain and scoped to one node of the test's own by a label:
// - a validating webhook that is down (failurePolicy Fail, nobody listening on its loopback
//   port) answers every uncordon of that node with 500, which a retry may fix: the operator
//   retries with backoff, and once the webhook is removed the node is uncordoned and the
//   AITask goes;
// - a ValidatingAdmissionPolicy denying the uncordon answers 422, which no retry can fix
//   (runtime/terminal.ts): the task is marked Stalled, naming the policy, and keeps its
//   finalizer; once the policy is gone, the next spec change (what the Stalled message tells
//   the user) runs the cleanup again and it lands.
// The node is cordoned with the operator's own patch and field manager (what CordonNode
// writes, operator/cordon.cluster.test.ts runs that path end to end), so the finalizer owns it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDON_FIELD_MANAGER, CORDONED_BY_ANNOTATION, cordonPatch, uncordonPatch } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import { ResourceClient, type ResourceType } from '../lib/kube/resources.ts';
import { findCondition } from '../api/status/conditions.ts';
import { freePorts } from '../scripts/lib/ports.ts';
import { fakeNode } from '../test/harness/nodes.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import { aitask, clients, taskEvents } from '../test/support/remediation.ts';
import type { Node } from './runtime/kinds.ts';

/** Label selecting the one node a test's fault applies to (value: the test's namespace). */
const FAULT_LABEL = 'aiops-test/uncordon-fault';

/** CEL: this update lifts a cordon (the node was unschedulable and no longer is). */
const UNCORDON =
  'has(oldObject.spec.unschedulable) && oldObject.spec.unschedulable == true && !(has(object.spec.unschedulable) && object.spec.unschedulable == true)';

const admission = (plural: string): ResourceType => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural,
  namespaced: false,
});

/** An admissionregistration.k8s.io/v1 object, as far as the test writes it. */
interface AdmissionObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}

type Clients = Awaited<ReturnType<typeof clients>>;

/** A task `holder` in a fresh namespace, holding a cordon of a fresh node, with an operator reconciling it. */
interface Held {
  readonly ns: string;
  readonly node: string;
  readonly c: Clients;
  readonly op: OperatorProcess;
}

async function holdCordon(t: { after: (fn: () => Promise<void>) => void }, prefix: string): Promise<Held> {
  const ns = await freshNamespace(prefix, (fn) => t.after(fn));
  const c = await clients();
  const node = `${ns}-node`;
  const base = fakeNode(node) as Node & { metadata: { labels: Record<string, string> } };
  await c.nodes.create(undefined, {
    ...base,
    metadata: { ...base.metadata, labels: { ...base.metadata.labels, [FAULT_LABEL]: ns } },
    spec: { taints: [{ key: 'aiops.example.com/test', value: ns, effect: 'NoSchedule' }] },
  } as Node);
  t.after(async () => {
    await c.nodes.delete(undefined, node).catch(() => undefined);
  });
  await c.tasks.create(ns, aitask('holder', 'web', ns, { action: 'CordonNode' }, { intervalSeconds: 10 }));
  const op = await startOperatorProcess([`--namespace=${ns}`, '--zap-log-level=debug']);
  t.after(async () => {
    await op.stop();
  });
  const task = await eventually('the operator to take holder on (finalizer, status)', async () => {
    const o = await c.tasks.get(ns, 'holder');
    return o.metadata.finalizers?.includes(FINALIZER) === true &&
      o.status?.observedGeneration === o.metadata.generation
      ? o
      : undefined;
  });
  const live = await c.nodes.get(undefined, node);
  await c.nodes.patch(
    undefined,
    node,
    cordonPatch(task.metadata.uid ?? '', ns, live.metadata.resourceVersion ?? ''),
    { fieldManager: CORDON_FIELD_MANAGER },
  );
  await c.tasks.patchStatus(ns, 'holder', { cordonedNodes: [node] });
  return { ns, node, c, op };
}

/**
 * The apiserver's answer to `node`'s uncordon as the finalizer sends it, without applying it
 * (dry run: admission runs, storage does not): its status code.
 */
async function uncordonAnswer(c: Clients, node: string): Promise<number> {
  const live = await c.nodes.get(undefined, node);
  return c.transport
    .request({
      method: 'PATCH',
      path: `/api/v1/nodes/${node}`,
      patchType: 'merge',
      body: uncordonPatch(live.metadata.resourceVersion ?? ''),
      query: { dryRun: 'All', fieldManager: CORDON_FIELD_MANAGER },
    })
    .then(
      () => 200,
      (err: unknown) => (err as { code?: number }).code ?? 0,
    );
}

/** Waits until a dry-run uncordon of `node` is answered with `code`. */
async function uncordonAnswers(c: Clients, node: string, code: number): Promise<void> {
  await eventually(`a dry-run uncordon of ${node} answered ${code}`, async () =>
    (await uncordonAnswer(c, node)) === code ? true : undefined,
  );
}

/** Asserts holder is Terminating with its finalizer and node still cordoned and marked. */
async function stillHeld({ ns, node, c }: Held): Promise<void> {
  const task = await c.tasks.get(ns, 'holder');
  assert.ok(task.metadata.deletionTimestamp !== undefined, 'holder is Terminating');
  assert.ok(task.metadata.finalizers?.includes(FINALIZER), 'the finalizer stays while the uncordon fails');
  const n = await c.nodes.get(undefined, node);
  assert.equal(n.spec?.unschedulable, true, 'the node is still cordoned');
  assert.equal(n.metadata.annotations?.[CORDONED_BY_ANNOTATION], task.metadata.uid, 'and marked');
}

/** Waits until holder is gone; asserts its node is uncordoned and unmarked by the finalizer. */
async function released({ ns, node, c }: Held): Promise<void> {
  await eventually(
    'holder to be gone',
    async () =>
      c.tasks.get(ns, 'holder').then(
        () => undefined,
        () => true,
      ),
    120_000,
  );
  const n = await c.nodes.get(undefined, node);
  assert.notEqual(n.spec?.unschedulable, true, 'the node is uncordoned');
  assert.equal(n.metadata.annotations?.[CORDONED_BY_ANNOTATION], undefined, 'and unmarked');
  const uncordoned = await eventually('the Uncordoned Event of the finalizer', async () =>
    (await taskEvents(ns, 'holder')).find((e) => e.reason === 'Uncordoned'),
  );
  assert.match(uncordoned.note, new RegExp(`uncordoned ${node}`));
}

test('an uncordon refused by a webhook that is down keeps the finalizer and is retried with backoff until it lands', async (t) => {
  const held = await holdCordon(t, 'seed-uncordon-500');
  const { ns, node, c, op } = held;
  const hooks = new ResourceClient<AdmissionObject>(
    c.transport,
    admission('validatingwebhookconfigurations'),
  );
  const [deadPort = 0] = await freePorts(1);
  const name = `${ns}-uncordon-down`;
  await hooks.create(undefined, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: [
      {
        name: 'uncordon-down.aiops.example.com',
        clientConfig: { url: `https://127.0.0.1:${deadPort}/validate` },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['UPDATE'],
            resources: ['nodes'],
            scope: 'Cluster',
          },
        ],
        objectSelector: { matchLabels: { [FAULT_LABEL]: ns } },
        matchConditions: [{ name: 'uncordon', expression: UNCORDON }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 2,
      },
    ],
  });
  t.after(async () => {
    await hooks.delete(undefined, name).catch(() => undefined);
  });
  await uncordonAnswers(c, node, 500);

  const errors = await op.metric('controller_runtime_reconcile_errors_total');
  const retries = await op.metric('workqueue_retries_total');
  // The first failure is a warning; the same failure again within a minute only a debug line.
  const retried = new Set(['reconcile failed, retrying', 'reconcile failed again, retrying']);
  const failures = () => op.logs.filter((l) => retried.has(String(l.msg)) && l.key === `${ns}/holder`);
  await c.tasks.delete(ns, 'holder');
  await eventually('three failed cleanups of holder, counted and logged', async () =>
    (await op.metric('controller_runtime_reconcile_errors_total')) >= errors + 3 && failures().length >= 3
      ? true
      : undefined,
  );
  await stillHeld(held);
  assert.equal(failures()[0]?.level, 'warn');
  for (const f of failures())
    assert.match(String(f.error), /failed calling webhook "uncordon-down\.aiops\.example\.com"/);
  assert.ok(
    (await op.metric('workqueue_retries_total')) >= retries + 3,
    'each failure requeued the key with backoff',
  );

  await hooks.delete(undefined, name);
  await released(held);
});

test('an uncordon denied by an admission policy (422) marks the Terminating task Stalled, keeps the finalizer, and lands on the next spec change', async (t) => {
  const held = await holdCordon(t, 'seed-uncordon-422');
  const { ns, node, c, op } = held;
  const policies = new ResourceClient<AdmissionObject>(c.transport, admission('validatingadmissionpolicies'));
  const bindings = new ResourceClient<AdmissionObject>(
    c.transport,
    admission('validatingadmissionpolicybindings'),
  );
  const name = `${ns}-no-uncordon`;
  await policies.create(undefined, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes'] },
        ],
      },
      validations: [
        { expression: `!(${UNCORDON})`, message: 'uncordon held by the test', reason: 'Invalid' },
      ],
    },
  });
  await bindings.create(undefined, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { objectSelector: { matchLabels: { [FAULT_LABEL]: ns } } },
    },
  });
  t.after(async () => {
    await bindings.delete(undefined, name).catch(() => undefined);
    await policies.delete(undefined, name).catch(() => undefined);
  });
  await uncordonAnswers(c, node, 422);

  await c.tasks.delete(ns, 'holder');
  const stalled = await eventually('holder Stalled by the refused uncordon', async () => {
    const o = await c.tasks.get(ns, 'holder');
    const s = findCondition(o.status?.conditions, 'Stalled');
    return s?.status === 'True' && s.reason === 'Invalid' ? s : undefined;
  });
  assert.match(stalled.message, new RegExp(`ValidatingAdmissionPolicy '${name}'.*uncordon held by the test`));
  assert.match(stalled.message, /when the spec changes/);
  // The log line follows the status write: wait for it rather than expect it already read.
  await eventually('the stalled reconcile logged', () =>
    op.logs.some((l) => l.msg === 'reconcile stalled; no retry can fix this' && l.key === `${ns}/holder`)
      ? true
      : undefined,
  );
  await stillHeld(held);

  await bindings.delete(undefined, name);
  await policies.delete(undefined, name);
  await uncordonAnswers(c, node, 200);
  await stillHeld(held);
  await c.tasks.patch(ns, 'holder', { spec: { intervalSeconds: 11 } });
  await released(held);
});
