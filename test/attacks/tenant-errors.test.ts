// Attack: make the operator count a tenant's error as its own. Mallory owns an object of a
// custom kind the admin granted (its /scale), and writes into its status a selector that does
// not parse, which the /scale shows as status.selector; her RestartPod task on it breaches.
// Listing the pods with that selector is a request the apiserver refuses (400, which mallory's
// own LIST shows here), and it must never become the operator's reconcile error: the task says
// TargetInvalid naming the object, the field and why, and the reconcile error series (the input
// of AIOpsReconcileErrors) does not move while the task is evaluated again and again. Once she
// fixes the selector the next evaluation acts, on the pod of her object only. Played with the
// tenants' own tokens against the operator under the CSV's RBAC.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { BadRequestError } from '../../lib/kube/errors.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { targetKindGrant } from '../../scripts/olm/target-kinds.ts';
import { eventually } from '../support/operator.ts';
import {
  apiVersionOf,
  defineScaleKind,
  ownedReplicaSet,
  scaleObject,
  scaleObjectPath,
  setScaleStatus,
  type ScaleKind,
} from '../support/scale-kinds.ts';
import { LOAD, loadTask, type Stage } from './stage.ts';
import { useStage } from './use-stage.ts';

const GROUP = 'tenant-errors.attacks.aiops.example.com';
/** Granted to the operator (get and update on knots/scale); mallory writes its objects and their status. */
const KNOT: ScaleKind = { group: GROUP, kind: 'Knot', plural: 'knots' };
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
/** A selector the apiserver's labels.Parse refuses: an `in` list never closed. */
const UNPARSABLE = 'app in (knot';

/** The admin defines Knots, grants the operator their scale, and lets mallory write Knots and their status. */
async function admit(s: Stage): Promise<void> {
  await defineScaleKind(s.admin, KNOT);
  const [role, binding] = targetKindGrant(
    { apiGroup: GROUP, resources: [KNOT.plural] },
    { name: 'aiops-target-tenant-errors-attacks' },
  );
  await s.admin.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: role });
  await s.admin.request({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: binding });
  const ns = s.mallory.namespace;
  await s.admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/roles`,
    body: {
      metadata: { name: 'tenant-knots' },
      rules: [
        {
          apiGroups: [GROUP],
          resources: [KNOT.plural, `${KNOT.plural}/status`],
          verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
        },
      ],
    },
  });
  await s.admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/rolebindings`,
    body: {
      metadata: { name: 'tenant-knots' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant-knots' },
      subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: ns }],
    },
  });
}

let mallory: KubeTransport | undefined;
/** Mallory's own connection (her token). */
const asMallory = (): KubeTransport => {
  if (mallory === undefined) throw new Error('the stage is not started');
  return mallory;
};

const { stage, undisturbed } = useStage({
  setup: async (s) => {
    await admit(s);
    mallory = await KubeTransport.create({ kubeconfig: s.mallory.kubeconfig });
  },
});

test('a selector a tenant wrote that does not parse is her task’s TargetInvalid, never a reconcile error; fixed, the task acts', async (t) => {
  const m = stage.mallory;
  const knot = await asMallory().request<{ metadata: { uid?: string } }>({
    method: 'POST',
    path: scaleObjectPath(KNOT, m.namespace),
    body: scaleObject(KNOT, 'knot', 1),
  });
  await stage.admin.request({
    method: 'POST',
    path: `/apis/apps/v1/namespaces/${m.namespace}/replicasets`,
    body: ownedReplicaSet('knot-rs', 'knot', 1, {
      apiVersion: apiVersionOf(KNOT),
      kind: KNOT.kind,
      name: 'knot',
      uid: knot.metadata.uid ?? '',
    }),
  });
  await setScaleStatus(asMallory(), KNOT, m.namespace, 'knot', { replicas: 1, selector: UNPARSABLE });
  await assert.rejects(
    m.pods.list(m.namespace, { labelSelector: UNPARSABLE }),
    BadRequestError,
    'the apiserver answers a LIST with this selector 400',
  );
  const pod = await eventually("the Knot's pod running", async () => {
    const pods = (await m.pods.list(m.namespace, { labelSelector: 'app=knot' })).items;
    const running = pods.filter((p) => p.status?.phase === 'Running');
    return pods.length === 1 && running.length === 1 ? running[0] : undefined;
  });

  const errors = () => stage.operator.metric('controller_runtime_reconcile_errors_total');
  const reconciles = () => stage.operator.metric('controller_runtime_reconcile_total');
  const errors0 = await errors();
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'knot' }, 5);
  const restart: v2.Spec['remediation'] = { action: 'RestartPod', cooldownSeconds: 3600, maxAttempts: 10 };
  await m.tasks.create(m.namespace, {
    ...loadTask('knot', restart, {
      target: { apiVersion: apiVersionOf(KNOT), kind: KNOT.kind, name: 'knot' },
    }),
    metadata: { name: 'knot' },
  });
  const invalid = await eventually('the task to say TargetInvalid', async () => {
    const task = await m.tasks.get(m.namespace, 'knot');
    const found = findCondition(task.status?.conditions, 'TargetFound');
    return found?.status === 'False' && found.reason === 'TargetInvalid' ? task : undefined;
  });
  const found = findCondition(invalid.status?.conditions, 'TargetFound');
  assert.match(
    found?.message ?? '',
    /^the \/scale status\.selector of Knot\.tenant-errors\.attacks\.aiops\.example\.com mallory\/knot does not parse as a label selector: unable to parse requirement: .*; the operator does not act on Knot\.tenant-errors\.attacks\.aiops\.example\.com mallory\/knot until that is fixed$/,
  );
  assert.equal(findCondition(invalid.status?.conditions, 'Stalled')?.reason, 'TargetInvalid');
  assert.equal(invalid.status?.phase, 'Failed');

  // Evaluated again at its interval (10 s), each time the same verdict and not one error.
  const r0 = await reconciles();
  await eventually(
    'three more reconciles',
    async () => ((await reconciles()) - r0 >= 3 ? true : undefined),
    120_000,
  );
  const again = await m.tasks.get(m.namespace, 'knot');
  assert.equal(findCondition(again.status?.conditions, 'TargetFound')?.reason, 'TargetInvalid');
  assert.notEqual(again.status?.lastDecision?.executed, true, 'nothing evicted');
  const moved = (await errors()) - errors0;
  t.diagnostic(`${(await reconciles()) - r0} reconciles of the invalid task, ${moved} reconcile errors`);
  assert.equal(moved, 0, 'the reconcile error series did not move');
  await undisturbed();

  // Fixed by its owner, the task recovers at its next evaluation: the Knot's pod is evicted.
  await setScaleStatus(asMallory(), KNOT, m.namespace, 'knot', { replicas: 1, selector: 'app=knot' });
  const done = await eventually(
    'the RestartPod executed',
    async () => {
      const task = await m.tasks.get(m.namespace, 'knot');
      return task.status?.lastDecision?.executed === true ? task : undefined;
    },
    120_000,
  );
  assert.equal(done.status?.lastDecision?.effect?.pod, pod.metadata.name, "the Knot's own pod");
  assert.equal(findCondition(done.status?.conditions, 'TargetFound')?.status, 'True');
  assert.equal((await errors()) - errors0, 0, 'still no reconcile error');
  await m.tasks.delete(m.namespace, 'knot');
  await undisturbed();
});
