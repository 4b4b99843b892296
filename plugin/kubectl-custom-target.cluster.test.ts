// Integration tests of `kubectl aiops` on an AITask whose target is a custom kind: a CRD with
// the scale subresource (test/support/scale-kinds.ts: Shard, in a group of this file's own, so
// no other test shares it), read through its /scale with the user's credentials: describe
// shows its desired and current replicas and selector, approve binds to the UID its Scale
// carries, and a kind that serves no /scale, is not served, or that the user may not read is
// one clear line. Status is written directly, so no operator needs to run.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { CRD_RESOURCE, ResourceClient, resourcePath, type ResourceType } from '../lib/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { eventually } from '../test/harness/wait.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';
import { defineScaleKind, scaleObject, setScaleStatus, type ScaleKind } from '../test/support/scale-kinds.ts';
import { bindAITaskReader } from '../test/support/aitask-reader.ts';

const GROUP = `plugin-${randomBytes(3).toString('hex')}.test.aiops.example.com`;
const SHARD: ScaleKind = { group: GROUP, kind: 'Shard', plural: 'shards' };
const SHARDS: ResourceType = { group: GROUP, version: 'v1', plural: 'shards', namespaced: true };
const shard = (name: string, replicas: number): Shard => scaleObject(SHARD, name, replicas);
const TYPE = `Shard.${GROUP}`;
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

let PATH = '';
let KC = '';
const run = (args: readonly string[]): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC });
const json = (r: KubectlResult): Record<string, unknown> => {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

interface Shard {
  metadata: { name: string; uid?: string };
  spec: { replicas?: number };
}

function task(name: string, ns: string, target: v2.Spec['target']): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, namespace: ns },
    spec: {
      target,
      trigger: { query: 'vector(1)', threshold: 0.8 },
      remediation: { action: 'ScaleUp', scale: { maxReplicas: 5 } },
      approval: 'Manual',
    },
  };
}

before(async () => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
  await defineScaleKind(await testTransport(), SHARD);
});

after(async () => {
  const crds = new ResourceClient<object>(await testTransport(), CRD_RESOURCE);
  await crds.delete(undefined, `shards.${GROUP}`).catch(() => undefined);
});

void test('describe reads a custom kind through /scale: desired and current replicas and selector, rollout unknown', async (t) => {
  const ns = await freshNamespace('plugin-shard', (fn) => t.after(fn));
  const admin = await testTransport();
  const shards = new ResourceClient<Shard>(admin, SHARDS);
  await shards.create(ns, shard('s1', 3));
  await setScaleStatus(admin, SHARD, ns, 's1', { replicas: 2, selector: 'app=s1,tier=db' });
  await (
    await testAITasks('v2')
  ).create(ns, task('shard-load', ns, { apiVersion: `${GROUP}/v1`, kind: 'Shard', name: 's1' }));

  const text = await run(['describe', 'shard-load', '-n', ns]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    new RegExp(
      `^Target: +${esc(`${TYPE} ${ns}/s1 (apiVersion ${GROUP}/v1) (the AITask's namespace)`)}$`,
      'm',
    ),
  );
  assert.match(
    text.stdout,
    new RegExp(
      `^Target Health: +${esc(`${TYPE} ${ns}/s1: 2/3 current, selector app=s1,tier=db; rollout unknown: not tracked for ${TYPE}`)}: .*$`,
      'm',
    ),
  );
  const view = json(await run(['describe', 'shard-load', '-n', ns, '-o', 'json']));
  assert.deepEqual(view['target'], {
    apiVersion: `${GROUP}/v1`,
    kind: 'Shard',
    name: 's1',
    namespace: ns,
    namespaceFrom: 'aitask',
  });
  assert.deepEqual(view['targetHealth'], {
    found: true,
    kind: 'Scale',
    type: TYPE,
    desired: 3,
    current: 2,
    selector: 'app=s1,tier=db',
    rollout: {
      state: 'unknown',
      message: `not tracked for ${TYPE}: its /scale says how many replicas, not whether they are ready or updated`,
    },
  });

  // Scaled to 0 through /scale: the Scale omits 0, and describe says 0, not a default.
  await admin.request({
    method: 'PATCH',
    path: resourcePath(SHARDS, ns, 's1', 'scale'),
    patchType: 'merge',
    body: { spec: { replicas: 0 } },
  });
  const zero = json(await run(['describe', 'shard-load', '-n', ns, '-o', 'json']))['targetHealth'];
  assert.equal((zero as { desired?: unknown }).desired, 0);

  await shards.delete(ns, 's1');
  const gone = await eventually('describe to find s1 gone', async () => {
    const r = await run(['describe', 'shard-load', '-n', ns]);
    return /not found$/m.test(r.stdout) ? r : undefined;
  });
  assert.match(gone.stdout, new RegExp(`^Target Health: +${esc(`${TYPE} ${ns}/s1`)} not found$`, 'm'));
});

void test('approve shows a custom kind by its UID as its /scale carries it', async (t) => {
  const ns = await freshNamespace('plugin-shard-ok', (fn) => t.after(fn));
  const s2 = await new ResourceClient<Shard>(await testTransport(), SHARDS).create(ns, shard('s2', 2));
  const tasks = await testAITasks('v2');
  const created = await tasks.create(
    ns,
    task('shard-up', ns, { apiVersion: `${GROUP}/v1`, kind: 'Shard', name: 's2' }),
  );
  await tasks.patchStatus(ns, 'shard-up', {
    phase: 'AwaitingApproval',
    pendingDecision: {
      id: 'd-shard',
      action: 'ScaleUp',
      source: 'rules',
      reason: 'load 0.9 > 0.8',
      executed: false,
      blockedBy: 'AwaitingApproval',
      at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      generation: created.metadata.generation ?? 1,
      target: { namespace: ns, name: 's2', uid: s2.metadata.uid ?? '' },
      effect: { fromReplicas: 2, replicas: 3 },
    },
  });
  const shown = await run(['approve', 'shard-up', '-n', ns]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(
    shown.stdout,
    new RegExp(`^ {2}Shard: +${esc(`${ns}/s2 (${GROUP}/v1, uid ${s2.metadata.uid ?? '?'})`)}$`, 'm'),
  );
  assert.match(shown.stdout, /^ {2}Replicas: +2 → 3$/m);
  const doc = json(await run(['approve', 'shard-up', '-n', ns, '-o', 'json']));
  assert.deepEqual((doc['decision'] as { target?: unknown }).target, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Shard',
    namespace: ns,
    name: 's2',
    uid: s2.metadata.uid,
  });
});

void test('a kind without /scale, one not served, and one the user may not read: one clear line each', async (t) => {
  const ns = await freshNamespace('plugin-shard-no', (fn) => t.after(fn));
  const admin = await testTransport();
  await new ResourceClient<Shard>(admin, SHARDS).create(ns, shard('s3', 1));
  const tasks = await testAITasks('v2');
  await tasks.create(ns, task('on-configmap', ns, { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }));
  await tasks.create(ns, task('on-nothing', ns, { apiVersion: `${GROUP}/v1`, kind: 'Nothing', name: 'x' }));
  await tasks.create(ns, task('on-shard', ns, { apiVersion: `${GROUP}/v1`, kind: 'Shard', name: 's3' }));

  const noScale = await run(['describe', 'on-configmap', '-n', ns]);
  assert.equal(noScale.code, 0, noScale.stderr);
  assert.match(
    noScale.stdout,
    new RegExp(
      `^Target Health: +${esc(`ConfigMap ${ns}/cfg cannot be read: ConfigMap (v1) does not serve the /scale subresource (check spec.target.apiVersion and kind; list what is served with: kubectl api-resources --api-group='')`)}$`,
      'm',
    ),
  );
  const notServed = await run(['describe', 'on-nothing', '-n', ns]);
  assert.match(
    notServed.stdout,
    new RegExp(
      `^Target Health: +${esc(`Nothing.${GROUP} ${ns}/x cannot be read: the API server serves no kind Nothing (${GROUP}/v1) (check spec.target.apiVersion and kind; list what is served with: kubectl api-resources --api-group=${GROUP})`)}$`,
      'm',
    ),
  );
  const approve = await run(['approve', 'on-nothing', '-n', ns]);
  assert.equal(approve.code, 1, approve.stdout);
  assert.match(
    approve.stderr,
    new RegExp(`^error: ${esc(`Nothing.${GROUP} ${ns}/x cannot be read: the API server serves no kind`)}`),
  );
  assert.equal(approve.stderr.trim().split('\n').length, 1, approve.stderr);
  // simulate reads the replicas to start from the same way, before it asks Prometheus.
  const simulated = await run([
    'simulate',
    'on-nothing',
    '-n',
    ns,
    '--prometheus-service',
    `${ns}/prometheus:9090`,
  ]);
  assert.equal(simulated.code, 1, simulated.stdout);
  assert.match(
    simulated.stderr,
    new RegExp(
      `^error: ${esc(`Nothing.${GROUP} ${ns}/x cannot be read: the API server serves no kind`)}.*: pass --replicas N to start from N replicas\n$`,
    ),
  );

  // A user who may read AITasks but not shards/scale: the line names the verb, the
  // subresource and the API group.
  await bindAITaskReader(admin, ns, [
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'shard-watcher' },
  ]);
  const forbidden = await eventually('the reader to read the AITask', async () => {
    const r = await run(['describe', 'on-shard', '-n', ns, '--as=shard-watcher']);
    return r.code === 0 ? r : undefined;
  });
  assert.match(
    forbidden.stdout,
    new RegExp(
      `^Target Health: +${esc(`${TYPE} ${ns}/s3 cannot be read:`)} .*cannot get resource "shards/scale" in API group "${esc(GROUP)}".*$`,
      'm',
    ),
  );
});
