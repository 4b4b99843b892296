// Integration: targets of a custom kind that serves /scale (a CRD defined here), through the
// operator process under the shipped RBAC plus, where granted, the rule an admin adds. The
// kind is found by discovery and scaled through its /scale within the task's bounds;
// RestartPod evicts only a pod whose controller chain leads to the target (pod → ReplicaSet
// → the custom object), never one another object of the kind controls nor a bare pod with
// its labels; a kind the admin has not granted is TargetRefused naming the missing rule, with
// one refused request per reconcile and nothing else, and is read once the grant comes.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { findCondition } from '../api/status/conditions.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, metricsForFile, operatorFor } from '../test/support/remediation.ts';
import {
  apiVersionOf,
  defineScaleKind,
  grantScale,
  ownedReplicaSet,
  scaleObject,
  scaleObjectPath,
  setScaleStatus,
  type ScaleKind,
} from '../test/support/scale-kinds.ts';
import type { ObjectMeta } from '../api/schema/common.ts';

const metrics = metricsForFile();
const GROUP = 'scale-kinds.test.aiops.example.com';
/** Granted to the operator by the tests that act on it. */
const SHARD: ScaleKind = { group: GROUP, kind: 'Shard', plural: 'shards' };
/** Never granted until the refusal test grants it itself. */
const POOL: ScaleKind = { group: GROUP, kind: 'Pool', plural: 'pools' };

interface CustomObject {
  metadata: ObjectMeta;
  spec?: { replicas?: number };
}

/** A v2 AITask on the `kind` object `target` reading `series`. */
function onKind(
  kind: ScaleKind,
  name: string,
  target: string,
  series: string,
  remediation: Parameters<typeof aitask>[3],
) {
  const task = aitask(name, target, series, remediation);
  return {
    ...task,
    spec: { ...task.spec, target: { apiVersion: apiVersionOf(kind), kind: kind.kind, name: target } },
  };
}

describe('targets of a custom kind that serves /scale', { concurrency: true }, async () => {
  const admin = await testTransport();
  await defineScaleKind(admin, SHARD);
  await defineScaleKind(admin, POOL);
  after(await grantScale(admin, SHARD));
  const get = (kind: ScaleKind, ns: string, name: string) =>
    admin.request<CustomObject>({ path: scaleObjectPath(kind, ns, name) });
  const create = (kind: ScaleKind, ns: string, name: string, replicas: number) =>
    admin.request<CustomObject>({
      method: 'POST',
      path: scaleObjectPath(kind, ns),
      body: scaleObject(kind, name, replicas),
    });

  test('ScaleUp and ScaleDown write the object’s /scale within the bounds', async (t) => {
    const ns = await freshNamespace('kind-scale', (fn) => t.after(fn));
    const c = await clients();
    await metrics.set(ns, 5);
    await create(SHARD, ns, 'web', 1);
    const up = { action: 'ScaleUp' as const, cooldownSeconds: 0, scale: { maxReplicas: 3 } };
    await c.tasks.create(ns, onKind(SHARD, 'web-up', 'web', ns, up));
    await operatorFor(ns, metrics.prometheus.url, t);

    await eventually('the Shard at its maxReplicas, 3', async () =>
      (await get(SHARD, ns, 'web')).spec?.replicas === 3 ? true : undefined,
    );
    const bounded = await eventually('the next ScaleUp refused at the bound (AtMaxReplicas)', async () => {
      const o = await c.tasks.get(ns, 'web-up');
      return o.status?.lastDecision?.blockedBy === 'AtMaxReplicas' ? o : undefined;
    });
    const found = findCondition(bounded.status?.conditions, 'TargetFound');
    assert.ok(found?.status === 'True', JSON.stringify(found));
    assert.match(found.message, new RegExp(`^Shard\\.${GROUP.replaceAll('.', '\\.')} ${ns}/web found`));

    await metrics.set(ns, 0);
    await c.tasks.patch(ns, 'web-up', {
      spec: {
        trigger: { operator: 'LessThan', threshold: 1 },
        remediation: { action: 'ScaleDown', cooldownSeconds: 0, scale: { minReplicas: 2, maxReplicas: 3 } },
      },
    });
    await eventually('the Shard down at its minReplicas, 2', async () =>
      (await get(SHARD, ns, 'web')).spec?.replicas === 2 ? true : undefined,
    );
    await eventually('the next ScaleDown refused at the bound (AtMinReplicas)', async () =>
      (await c.tasks.get(ns, 'web-up')).status?.lastDecision?.blockedBy === 'AtMinReplicas'
        ? true
        : undefined,
    );
    assert.equal((await get(SHARD, ns, 'web')).spec?.replicas, 2, 'never under minReplicas');
  });

  test('RestartPod evicts a pod whose owner chain leads to the object, never another’s or a bare one', async (t) => {
    const ns = await freshNamespace('kind-restart', (fn) => t.after(fn));
    const c = await clients();
    const app = await create(SHARD, ns, 'app', 2);
    const decoy = await create(SHARD, ns, 'decoy', 1);
    const owner = (o: CustomObject) => ({
      apiVersion: apiVersionOf(SHARD),
      kind: SHARD.kind,
      name: o.metadata.name ?? '',
      uid: o.metadata.uid ?? '',
    });
    await admin.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/replicasets`,
      body: ownedReplicaSet('app-rs', 'app', 2, owner(app)),
    });
    const template: Record<string, unknown> = ownedReplicaSet('x', 'app', 1, owner(app)).spec.template.spec;
    // Labelled as the target's pods, but another Shard's, and a bare one: neither is the target's.
    await c.pods.create(ns, {
      metadata: {
        name: 'decoy-pod',
        labels: { app: 'app' },
        ownerReferences: [{ ...owner(decoy), controller: true }],
      },
      spec: template,
    });
    await c.pods.create(ns, { metadata: { name: 'bare-pod', labels: { app: 'app' } }, spec: template });
    await setScaleStatus(admin, SHARD, ns, 'app', { replicas: 2, selector: 'app=app' });
    const running = async (): Promise<Map<string, string> | undefined> => {
      const pods = (await c.pods.list(ns)).items.filter(
        (p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined,
      );
      return pods.length === 4
        ? new Map(pods.map((p) => [p.metadata.name ?? '', p.metadata.uid ?? '']))
        : undefined;
    };
    const before = await eventually('the ReplicaSet’s 2 pods, decoy-pod and bare-pod running', running);
    await metrics.set(ns, 5);
    await c.tasks.create(
      ns,
      onKind(SHARD, 'restart', 'app', ns, { action: 'RestartPod', cooldownSeconds: 3600 }),
    );
    await operatorFor(ns, metrics.prometheus.url, t);

    const done = await eventually('the RestartPod executed', async () => {
      const o = await c.tasks.get(ns, 'restart');
      return o.status?.lastDecision?.executed === true ? o : undefined;
    });
    const evicted = done.status?.lastDecision?.effect?.pod ?? '';
    assert.match(evicted, /^app-rs-/, 'a pod of the ReplicaSet the Shard controls');
    const after = await eventually('the ReplicaSet back at 2 pods, one of them new', async () => {
      const now = await running();
      return now !== undefined && !now.has(evicted) ? now : undefined;
    });
    for (const name of ['decoy-pod', 'bare-pod'])
      assert.equal(after.get(name), before.get(name), `${name} is untouched`);
    assert.equal([...after.keys()].filter((n) => before.has(n)).length, 3, 'exactly one pod replaced');
  });

  test('a kind the admin has not granted is TargetRefused naming the rule, one refused request per reconcile', async (t) => {
    const ns = await freshNamespace('kind-refused', (fn) => t.after(fn));
    const c = await clients();
    await metrics.set(ns, 5);
    await create(POOL, ns, 'p', 1);
    const up = { action: 'ScaleUp' as const, cooldownSeconds: 0, scale: { maxReplicas: 3 } };
    await c.tasks.create(ns, onKind(POOL, 'pool-up', 'p', ns, up));
    const op = await operatorFor(ns, metrics.prometheus.url, t);

    const refused = await eventually('the task TargetRefused', async () => {
      const o = await c.tasks.get(ns, 'pool-up');
      const cond = findCondition(o.status?.conditions, 'TargetFound');
      return cond?.status === 'False' && cond.reason === 'TargetRefused' ? { o, cond } : undefined;
    });
    assert.match(
      refused.cond.message,
      new RegExp(`may not get pools/scale in API group ${GROUP.replaceAll('.', '\\.')}`),
    );
    assert.match(refused.cond.message, /grants it get and update on pools\/scale/);

    // The operator's own count of its answers (client-go's rest_client_requests_total): the
    // apiserver counts no request its authorizer refused.
    const refusedGets = () => op.metric('rest_client_requests_total', { code: '403' });
    const reconciles = () => op.metric('controller_runtime_reconcile_total');
    const writes = () => op.metric('rest_client_requests_total', { method: 'PUT' });
    const [r0, f0, w0] = [await reconciles(), await refusedGets(), await writes()];
    let seen = '';
    await eventually(
      'three more reconciles, each with exactly one refused /scale GET',
      async () => {
        const [r, f] = [await reconciles(), await refusedGets()];
        seen = `${r - r0} reconciles, ${f - f0} refused GETs`;
        return r - r0 >= 3 && f - f0 === r - r0 ? true : undefined;
      },
      90_000,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message} (last: ${seen})`);
    });
    const now = await c.tasks.get(ns, 'pool-up');
    assert.equal(now.metadata.resourceVersion, refused.o.metadata.resourceVersion, 'no status written again');
    assert.equal((await get(POOL, ns, 'p')).spec?.replicas, 1, 'the Pool is not scaled');
    assert.equal(await writes(), w0, 'nothing written since');

    t.after(await grantScale(admin, POOL));
    await eventually(
      'the Pool scaled once the admin grants it, with no restart',
      async () => ((await get(POOL, ns, 'p')).spec?.replicas === 3 ? true : undefined),
      90_000,
    );
  });
});
