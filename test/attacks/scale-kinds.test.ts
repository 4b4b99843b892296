// Attacks through targets of a custom kind that serves /scale, which tenants write as they
// write StatefulSets; the kinds are CRDs of the admin's in a group of this file's own. The
// admin's grant (get and update on PLURAL/scale, list on an owner kind) is the consent that
// tenants may automate a kind: mallory's tasks on a kind never granted are TargetRefused naming
// the missing rule, and neither the object nor its pod moves. Tasks naming alice's object of a
// granted kind are CrossNamespaceRefused with not one /scale read of it (the apiserver's own
// count, which moves once alice's own task reads it). A /scale answer made huge by the
// selector mallory writes in her object's status is refused (TooLarge) with the operator up and
// alice's task evaluated; a selector past the operator's bound but under the answer's is
// dropped, and RestartPod still takes only the pod whose controller chain leads to the target.
// Forty pods on a target's labels, each controlled by its own object of an owner kind the
// operator may not read, cost at most MAX_OWNERS_READ refused reads in a decision and are never
// taken; a chain of more owners than MAX_OWNER_HOPS is not followed. A hundred tasks naming
// group-versions no one serves are refused (NotServed) with the operator's memory under its
// limit. Played with the tenants' own tokens against the operator under the CSV's RBAC.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition, ObjectMeta } from '../../api/schema/common.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { MAX_OWNER_HOPS, MAX_OWNERS_READ } from '../../operator/edges/owner-chain.ts';
import { SCALE_MAX_BYTES } from '../../operator/scale-targets.ts';
import { MAX_SELECTOR_BYTES } from '../../operator/runtime/trim.ts';
import { targetKindGrant } from '../../scripts/olm/target-kinds.ts';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../../scripts/olm/deployment.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
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
import { LOAD, loadTask, type Stage, type Tenant } from './stage.ts';
import { useStage } from './use-stage.ts';

const GROUP = 'scale-kinds.attacks.aiops.example.com';
/** Never granted to the operator. */
const VAULT: ScaleKind = { group: GROUP, kind: 'Vault', plural: 'vaults' };
/** Granted; only alice has one, so every /scale read of it is of her namespace. */
const LEDGER: ScaleKind = { group: GROUP, kind: 'Ledger', plural: 'ledgers' };
/** Granted; mallory's targets. */
const SHARD: ScaleKind = { group: GROUP, kind: 'Shard', plural: 'shards' };
/** Granted as an owner kind (list): the controllers between a Shard and its pods. */
const CELL: ScaleKind = { group: GROUP, kind: 'Cell', plural: 'cells' };
/** An owner kind never granted: the controller mallory names on her decoy pods. */
const DRONE: ScaleKind = { group: GROUP, kind: 'Drone', plural: 'drones' };
const KINDS = [VAULT, LEDGER, SHARD, CELL, DRONE];
/** A container the kwok nodes run. */
const POD_SPEC: Record<string, unknown> = {
  containers: [{ name: 'app', image: 'registry.example.com/demo/app:1.0' }],
};
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

interface CustomObject {
  metadata: ObjectMeta;
  spec?: { replicas?: number };
}

/** An owner reference's identity of an object. */
interface OwnerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** Reads and writes objects of the file's kinds with one identity. */
interface Objects {
  /** Creates object `name`, controlled by `controller` when given. */
  create(
    kind: ScaleKind,
    ns: string,
    name: string,
    replicas: number,
    controller?: OwnerRef,
  ): Promise<CustomObject>;
  get(kind: ScaleKind, ns: string, name: string): Promise<CustomObject>;
  status(kind: ScaleKind, ns: string, name: string, selector: string): Promise<void>;
}

function objectsOf(t: KubeTransport): Objects {
  return {
    create: (kind, ns, name, replicas, controller) => {
      const body = scaleObject(kind, name, replicas);
      const owned =
        controller === undefined
          ? body
          : {
              ...body,
              metadata: { ...body.metadata, ownerReferences: [{ ...controller, controller: true }] },
            };
      return t.request<CustomObject>({ method: 'POST', path: scaleObjectPath(kind, ns), body: owned });
    },
    get: (kind, ns, name) => t.request<CustomObject>({ path: scaleObjectPath(kind, ns, name) }),
    status: (kind, ns, name, selector) => setScaleStatus(t, kind, ns, name, { replicas: 1, selector }),
  };
}

/**
 * What the admin does: defines the kinds, grants the operator Ledgers and Shards (their
 * scale) and Cells (list, an owner kind) as docs/install.md says, and lets each tenant write
 * objects of every kind (status included) in its own namespace.
 */
async function admit(s: Stage): Promise<void> {
  for (const kind of KINDS) await defineScaleKind(s.admin, kind);
  const grant = targetKindGrant(
    { apiGroup: GROUP, resources: [LEDGER.plural, SHARD.plural], ownerResources: [CELL.plural] },
    { name: 'aiops-target-scale-kinds-attacks' },
  );
  const [role, binding] = grant;
  await s.admin.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: role });
  await s.admin.request({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: binding });
  for (const ns of [s.mallory.namespace, s.alice.namespace]) {
    await s.admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${ns}/roles`,
      body: {
        metadata: { name: 'tenant-scale-kinds' },
        rules: [
          {
            apiGroups: [GROUP],
            resources: KINDS.flatMap((k) => [k.plural, `${k.plural}/status`]),
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
          },
        ],
      },
    });
    await s.admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${ns}/rolebindings`,
      body: {
        metadata: { name: 'tenant-scale-kinds' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant-scale-kinds' },
        subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: ns }],
      },
    });
  }
}

let mallory: Objects | undefined;
let alice: Objects | undefined;
/** The file's kinds as tenant `which` reads and writes them, with its own token. */
const as = (which: 'mallory' | 'alice'): Objects => {
  const objects = which === 'mallory' ? mallory : alice;
  if (objects === undefined) throw new Error('the stage is not started');
  return objects;
};

const { stage, undisturbed } = useStage({
  setup: async (s) => {
    await admit(s);
    mallory = objectsOf(await KubeTransport.create({ kubeconfig: s.mallory.kubeconfig }));
    alice = objectsOf(await KubeTransport.create({ kubeconfig: s.alice.kubeconfig }));
  },
});

/** A ScaleUp with room to act at every evaluation. */
const SCALE_UP: v2.Spec['remediation'] = {
  action: 'ScaleUp',
  scale: { maxReplicas: 10 },
  cooldownSeconds: 0,
  maxAttempts: 10,
};
/** A RestartPod with no cooldown. */
const RESTART: v2.Spec['remediation'] = { action: 'RestartPod', cooldownSeconds: 0, maxAttempts: 10 };

/** Mallory's task `name` on object `target` of `kind` (in `namespace`, else hers), breaching: LOAD of `target` at 5. */
async function attack(
  name: string,
  kind: ScaleKind,
  target: string,
  remediation: v2.Spec['remediation'],
  opts: { namespace?: string; intervalSeconds?: number } = {},
): Promise<void> {
  const m = stage.mallory;
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: target }, 5);
  const task = loadTask(target, remediation, {
    target: {
      apiVersion: apiVersionOf(kind),
      kind: kind.kind,
      name: target,
      ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
    },
    ...(opts.intervalSeconds !== undefined ? { intervalSeconds: opts.intervalSeconds } : {}),
  });
  await m.tasks.create(m.namespace, { ...task, metadata: { name } });
}

/** Waits until mallory's task `name` says `reason` in its TargetFound condition; returns the condition. */
async function refusedWith(name: string, reason: string): Promise<Condition> {
  const m = stage.mallory;
  return eventually(`${name} to say ${reason}`, async () => {
    const task = await m.tasks.get(m.namespace, name);
    const found = findCondition(task.status?.conditions, 'TargetFound');
    return found?.status === 'False' && found.reason === reason ? found : undefined;
  });
}

/** The running pods of `tenant` whose names start with `prefix`, name to UID, once there are `count` of them. */
async function runningPods(
  tenant: Tenant,
  prefix: string,
  count: number,
): Promise<Map<string, string> | undefined> {
  const pods = (await tenant.pods.list(tenant.namespace)).items.filter((p) =>
    (p.metadata.name ?? '').startsWith(prefix),
  );
  const running = pods.filter(
    (p) => p.status?.phase === 'Running' && p.metadata.deletionTimestamp === undefined,
  );
  return running.length === count && pods.length === count
    ? new Map(running.map((p) => [p.metadata.name ?? '', p.metadata.uid ?? '']))
    : undefined;
}

/** The owner reference of `o`, an object of `kind`. */
const ownerOf = (kind: ScaleKind, o: CustomObject): OwnerRef => ({
  apiVersion: apiVersionOf(kind),
  kind: kind.kind,
  name: o.metadata.name ?? '',
  uid: o.metadata.uid ?? '',
});

/** A ReplicaSet of 1 pod controlled by `owner` in mallory's namespace, as the owner's controller makes it. */
async function replicaSetOf(kind: ScaleKind, owner: CustomObject, app: string): Promise<void> {
  await stage.admin.request({
    method: 'POST',
    path: `/apis/apps/v1/namespaces/${stage.mallory.namespace}/replicasets`,
    body: ownedReplicaSet(`${app}-rs`, app, 1, ownerOf(kind, owner)),
  });
}

/** `terms` label terms `kN=v` after `app=APP`: a selector of about 8 × `terms` bytes. */
const selectorOf = (app: string, terms: number): string =>
  [`app=${app}`, ...Array.from({ length: terms }, (_, i) => `k${i}=v`)].join(',');

test('a kind the admin never granted is TargetRefused naming the rule; the object and its pods never move', async () => {
  const m = stage.mallory;
  const vault = await as('mallory').create(VAULT, m.namespace, 'vault', 1);
  await as('mallory').status(VAULT, m.namespace, 'vault', 'app=vault');
  await replicaSetOf(VAULT, vault, 'vault');
  const pods = await eventually("the Vault's pod running", () => runningPods(m, 'vault-rs-', 1));
  const refusals = () => stage.operator.metric('rest_client_requests_total', { code: '403' });
  const before = await refusals();
  await attack('vault-up', VAULT, 'vault', SCALE_UP);
  await attack('vault-restart', VAULT, 'vault', RESTART);
  for (const name of ['vault-up', 'vault-restart']) {
    const refused = await refusedWith(name, 'TargetRefused');
    assert.match(
      refused.message,
      new RegExp(
        `^Vault\\.${GROUP.replaceAll('.', '\\.')} ${m.namespace}/vault is not read by the operator \\(Forbidden\\): the operator may not get vaults/scale in API group ${GROUP.replaceAll('.', '\\.')}; an admin grants it get and update on vaults/scale`,
      ),
    );
  }
  await eventually('the operator refused again at a later evaluation of each task', async () =>
    (await refusals()) - before >= 4 ? true : undefined,
  );
  const after = await as('mallory').get(VAULT, m.namespace, 'vault');
  assert.equal(after.spec?.replicas, 1, 'the Vault is not scaled');
  assert.equal(after.metadata.generation, vault.metadata.generation, 'nor written');
  assert.deepEqual(await runningPods(m, 'vault-rs-', 1), pods, "the Vault's pod is the same pod");
  for (const name of ['vault-up', 'vault-restart']) {
    const task = await m.tasks.get(m.namespace, name);
    assert.notEqual(task.status?.lastDecision?.executed, true, `${name} never acts`);
    await m.tasks.delete(m.namespace, name);
  }
  await undisturbed();
});

test("a task on alice's object of a granted kind is CrossNamespaceRefused, with not one /scale read of it", async () => {
  const m = stage.mallory;
  const a = stage.alice;
  await as('alice').create(LEDGER, a.namespace, 'books', 2);
  await as('alice').status(LEDGER, a.namespace, 'books', 'app=books');
  const books = await as('alice').get(LEDGER, a.namespace, 'books');
  const scaleReads = () =>
    apiserverRequests(stage.admin, { resource: LEDGER.plural, subresource: 'scale', verb: 'GET' });
  const reads0 = await scaleReads();
  await attack('books-up', LEDGER, 'books', SCALE_UP, { namespace: a.namespace });
  await attack('books-restart', LEDGER, 'books', RESTART, { namespace: a.namespace });
  for (const name of ['books-up', 'books-restart']) {
    const refused = await refusedWith(name, 'CrossNamespaceRefused');
    assert.ok(refused.message.length > 0, `${name} says why`);
  }
  const reconciles = () => stage.operator.metric('controller_runtime_reconcile_total');
  const r0 = await reconciles();
  await eventually('more reconciles of the refused tasks', async () =>
    (await reconciles()) - r0 >= 4 ? true : undefined,
  );
  assert.equal(await scaleReads(), reads0, "no /scale read of alice's Ledger");
  const after = await as('alice').get(LEDGER, a.namespace, 'books');
  assert.equal(after.spec?.replicas, 2, "alice's Ledger is not scaled");
  assert.equal(after.metadata.resourceVersion, books.metadata.resourceVersion, 'nor written');

  // The count does move for a read the operator makes: alice's own task on her Ledger.
  const watch = loadTask(
    'books',
    { action: 'Noop' },
    {
      target: { apiVersion: apiVersionOf(LEDGER), kind: LEDGER.kind, name: 'books' },
      trigger: { query: `max(${LOAD}{deployment="books"})`, threshold: 1000 },
    },
  );
  await a.tasks.create(a.namespace, watch);
  await eventually("alice's own Ledger found", async () => {
    const c = findCondition((await a.tasks.get(a.namespace, 'books')).status?.conditions, 'TargetFound');
    return c?.status === 'True' ? true : undefined;
  });
  assert.ok((await scaleReads()) > reads0, "alice's task read her Ledger's /scale, and the count shows it");
  await a.tasks.delete(a.namespace, 'books');
  for (const name of ['books-up', 'books-restart']) await m.tasks.delete(m.namespace, name);
  await undisturbed();
});

test('a /scale answer over its cap is TooLarge with the operator up; a selector over its bound is dropped and RestartPod takes the owned pod only', async (t) => {
  const m = stage.mallory;
  const hive = await as('mallory').create(SHARD, m.namespace, 'hive', 1);
  await replicaSetOf(SHARD, hive, 'hive');
  // Labelled as the Shard's pods, no controller: never the Shard's.
  await m.pods.create(m.namespace, {
    metadata: { name: 'hive-bare', labels: { app: 'hive' } },
    spec: POD_SPEC,
  });
  const before = await eventually("the Shard's pod and the bare one running", async () => {
    const rs = await runningPods(m, 'hive-rs-', 1);
    const bare = await runningPods(m, 'hive-bare', 1);
    return rs !== undefined && bare !== undefined ? new Map([...rs, ...bare]) : undefined;
  });

  const huge = selectorOf('hive', Math.ceil((SCALE_MAX_BYTES * 1.5) / 8));
  assert.ok(Buffer.byteLength(huge) > SCALE_MAX_BYTES, `${Buffer.byteLength(huge)} bytes of selector`);
  await as('mallory').status(SHARD, m.namespace, 'hive', huge);
  await attack('hive', SHARD, 'hive', SCALE_UP);
  const tooLarge = await refusedWith('hive', 'TargetRefused');
  assert.match(tooLarge.message, /\(TooLarge\): the \/scale of .* is over 65536 bytes/);
  assert.equal((await as('mallory').get(SHARD, m.namespace, 'hive')).spec?.replicas, 1, 'hive is not scaled');
  await undisturbed();

  const dropped = selectorOf('hive', Math.ceil((MAX_SELECTOR_BYTES * 2) / 8));
  const bytes = Buffer.byteLength(dropped);
  assert.ok(bytes > MAX_SELECTOR_BYTES && bytes < SCALE_MAX_BYTES / 2, `${bytes} bytes of selector`);
  await as('mallory').status(SHARD, m.namespace, 'hive', dropped);
  await m.tasks.patch(m.namespace, 'hive', {
    spec: { remediation: { action: 'RestartPod', cooldownSeconds: 3600 } },
  });
  const done = await eventually('the RestartPod executed', async () => {
    const task = await m.tasks.get(m.namespace, 'hive');
    return task.status?.lastDecision?.executed === true ? task : undefined;
  });
  const evicted = done.status?.lastDecision?.effect?.pod ?? '';
  assert.match(evicted, /^hive-rs-/, 'the pod of the ReplicaSet the Shard controls');
  t.diagnostic(`a ${bytes}-byte selector dropped: ${evicted} evicted through its owner chain`);
  await eventually('the ReplicaSet replaced the evicted pod', async () => {
    const rs = await runningPods(m, 'hive-rs-', 1);
    return rs !== undefined && !rs.has(evicted) ? true : undefined;
  });
  assert.deepEqual(
    await runningPods(m, 'hive-bare', 1),
    new Map([['hive-bare', before.get('hive-bare') ?? '']]),
    'the bare pod is the same pod',
  );
  await m.tasks.delete(m.namespace, 'hive');
  await undisturbed();
});

test('forty pods on a target’s labels, each controlled by another owner, cost at most the owner reads’ bound and are never taken', async (t) => {
  const m = stage.mallory;
  const DECOYS = 40;
  await as('mallory').create(SHARD, m.namespace, 'swarm', 1);
  await as('mallory').status(SHARD, m.namespace, 'swarm', 'app=swarm');
  for (let i = 0; i < DECOYS; i++) {
    const drone = await as('mallory').create(DRONE, m.namespace, `drone-${i}`, 1);
    await m.pods.create(m.namespace, {
      metadata: {
        name: `swarm-${i}`,
        labels: { app: 'swarm' },
        ownerReferences: [{ ...ownerOf(DRONE, drone), controller: true }],
      },
      spec: POD_SPEC,
    });
  }
  const before = await eventually(`the ${DECOYS} decoy pods running`, () => runningPods(m, 'swarm-', DECOYS));
  // Each owner read is refused (Drones are not granted), and the operator's own count of its
  // refused requests is exact where the apiserver's is not: it counts none it refused, and a
  // granted owner's reads beside the garbage collector's lookups of the same owners.
  const ownerReads = () => stage.operator.metric('rest_client_requests_total', { code: '403' });
  // One evaluation between the two counts (the next is a minute away), and it breaches.
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'swarm' }, 5);
  await eventually('Prometheus to hold the breach', async () =>
    (await stage.prometheus.query(`max(${LOAD}{namespace="${m.namespace}",deployment="swarm"})`)) === 5
      ? true
      : undefined,
  );
  const reads0 = await ownerReads();
  await attack('swarm', SHARD, 'swarm', RESTART, { intervalSeconds: 60 });
  const blocked = await eventually('the RestartPod to find no pod of the Shard', async () => {
    const task = await m.tasks.get(m.namespace, 'swarm');
    return task.status?.lastDecision?.blockedBy === 'NoPodToRestart' ? task : undefined;
  });
  const reads = (await ownerReads()) - reads0;
  t.diagnostic(`${DECOYS} pods each naming its own Drone: ${reads} Drone reads in one decision`);
  assert.ok(reads >= 1, 'the Drones are read');
  assert.ok(reads <= MAX_OWNERS_READ, `${reads} Drone reads, at most ${MAX_OWNERS_READ}`);
  assert.match(
    blocked.status?.lastDecision?.reason ?? '',
    /^no pod of Shard mallory\/swarm to act on \(an owner on its pods' controller chain is not readable: .*drones/,
  );
  assert.notEqual(blocked.status?.lastDecision?.executed, true, 'nothing evicted');
  assert.deepEqual(await runningPods(m, 'swarm-', DECOYS), before, 'the decoy pods are the same pods');
  await m.tasks.delete(m.namespace, 'swarm');
  await undisturbed();
});

test(`a controller chain longer than ${MAX_OWNER_HOPS} owners is not followed: RestartPod takes the pod within reach, never the one beyond`, async () => {
  const m = stage.mallory;
  const deep = await as('mallory').create(SHARD, m.namespace, 'deep', 1);
  await as('mallory').status(SHARD, m.namespace, 'deep', 'app=deep');
  /** Cells `prefix-1` … `prefix-<count>` controlling each other down from the target; returns the last. */
  const chain = async (prefix: string, count: number): Promise<CustomObject> => {
    let owner = ownerOf(SHARD, deep);
    let cell: CustomObject = deep;
    for (let i = count; i >= 1; i--) {
      cell = await as('mallory').create(CELL, m.namespace, `${prefix}-${i}`, 1, owner);
      owner = ownerOf(CELL, cell);
    }
    return cell;
  };
  const pods = { near: await chain('near', MAX_OWNER_HOPS), far: await chain('far', MAX_OWNER_HOPS + 1) };
  for (const [name, cell] of Object.entries(pods))
    await m.pods.create(m.namespace, {
      metadata: {
        name: `deep-${name}`,
        labels: { app: 'deep' },
        ownerReferences: [{ ...ownerOf(CELL, cell), controller: true }],
      },
      spec: POD_SPEC,
    });
  const before = await eventually('deep-near and deep-far running', () => runningPods(m, 'deep-', 2));
  await attack('deep', SHARD, 'deep', { ...RESTART, cooldownSeconds: 3600 });
  const done = await eventually('the RestartPod executed', async () => {
    const task = await m.tasks.get(m.namespace, 'deep');
    return task.status?.lastDecision?.executed === true ? task : undefined;
  });
  assert.equal(
    done.status?.lastDecision?.effect?.pod,
    'deep-near',
    `the pod ${MAX_OWNER_HOPS} owners from the Shard`,
  );
  assert.deepEqual(
    await eventually('deep-near evicted', () => runningPods(m, 'deep-', 1)),
    new Map([['deep-far', before.get('deep-far') ?? '']]),
    `the pod ${MAX_OWNER_HOPS + 1} owners from the Shard is the same pod`,
  );
  await m.tasks.delete(m.namespace, 'deep');
  await undisturbed();
});

test('a hundred tasks naming group-versions no one serves are refused (NotServed) with the operator ready and under its memory limit', async (t) => {
  const m = stage.mallory;
  const TASKS = 100;
  for (let i = 0; i < TASKS; i++) {
    const task = loadTask('nowhere', SCALE_UP, {
      target: { apiVersion: `g${i}.nowhere.example.com/v1`, kind: 'Thing', name: 'nowhere' },
    });
    await m.tasks.create(m.namespace, { ...task, metadata: { name: `nowhere-${i}` } });
  }
  stage.exporter.set(LOAD, { namespace: m.namespace, deployment: 'nowhere' }, 5);
  await eventually(
    `all ${TASKS} tasks refused as not served`,
    async () => {
      const refused = (await m.tasks.list(m.namespace)).items.filter((task) => {
        const c = findCondition(task.status?.conditions, 'TargetFound');
        return (
          (task.metadata.name ?? '').startsWith('nowhere-') &&
          c?.reason === 'TargetRefused' &&
          /\(NotServed\): the API server serves no kind Thing \(g\d+\.nowhere\.example\.com\/v1\)/.test(
            c.message,
          )
        );
      });
      return refused.length === TASKS ? true : undefined;
    },
    120_000,
  );
  const rss = await stage.operator.metric('process_resident_memory_bytes');
  t.diagnostic(`${TASKS} group-versions not served: resident memory ${Math.round(rss / 2 ** 20)} MiB`);
  assert.ok(rss < OPERATOR_MEMORY_LIMIT_MIB * 2 ** 20, `resident memory ${rss} bytes`);
  await undisturbed();
});
