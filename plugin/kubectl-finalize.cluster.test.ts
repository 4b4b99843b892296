// Integration tests of `kubectl aiops force-finalize` and `generation-diff` through the
// real kubectl: an AITask stuck in Terminating with a dead (then a live) operator Lease, a
// cordoned node it owes (carrying its mark) and one its status lists that it never
// cordoned (left cordoned), and an AITask whose observedGeneration lags its generation.
// The operator's Lease is found by name in any namespace (an OLM install runs in
// `operators`); a user who cannot read Leases gets a refusal naming --force.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { CORDONED_BY_ANNOTATION } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { buildRevision } from '../api/revisions.ts';
import type * as v2 from '../api/schema/v2.ts';
import { fromYaml } from '../lib/yaml.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { Resources, type NodeLike } from './kinds.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';

let PATH = '';
let KC = '';
const run = (args: readonly string[]): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC });
const micro = (d: Date): string => d.toISOString().replace(/Z$/, '000Z');

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

function spec(threshold = 0.8): v2.Spec {
  return {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold },
    remediation: { action: 'CordonNode' },
  };
}

async function lease(ns: string, renewed: Date): Promise<void> {
  const leases = new ResourceClient(await testTransport(), Resources.leases);
  const body = {
    metadata: { name: 'aiops-operator-leader', namespace: ns },
    spec: { holderIdentity: 'aiops-operator-abc', leaseDurationSeconds: 15, renewTime: micro(renewed) },
  };
  await leases.delete(ns, 'aiops-operator-leader').catch(() => undefined);
  await leases.create(ns, body);
}

/**
 * A node of our own (no kwok annotation, so nothing else manages it), cordoned; with `uid`,
 * marked as the operator marks a node it cordons for that AITask.
 */
async function cordonedNode(
  name: string,
  after: (fn: () => Promise<void>) => void,
  uid?: string,
): Promise<ResourceClient<NodeLike>> {
  const nodes = new ResourceClient<NodeLike>(await testTransport(), Resources.nodes);
  const annotations = uid === undefined ? {} : { annotations: { [CORDONED_BY_ANNOTATION]: uid } };
  await nodes.create(undefined, { metadata: { name, ...annotations }, spec: { unschedulable: true } });
  after(async () => {
    await nodes.delete(undefined, name).catch(() => undefined);
  });
  return nodes;
}

void describe('kubectl aiops force-finalize', () => {
  void test('dry run, refusal while the operator lives, then --yes: node uncordoned, finalizer gone, object deleted', async (t) => {
    const ns = await freshNamespace('plugin-ff', (fn) => t.after(fn));
    const opNs = await freshNamespace('plugin-ffop', (fn) => t.after(fn));
    const node = `${ns}-node`;
    const foreign = `${ns}-foreign`;
    const tasks = await testAITasks('v2');
    const created = await tasks.create(ns, {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: 'stuck', finalizers: [FINALIZER] },
      spec: spec(),
    });
    const nodes = await cordonedNode(node, (fn) => t.after(fn), created.metadata.uid);
    await cordonedNode(foreign, (fn) => t.after(fn));
    await tasks.patchStatus(ns, 'stuck', {
      phase: 'Healed',
      observedGeneration: 1,
      cordonedNodes: [node, foreign],
    });
    const args = ['force-finalize', 'stuck', '-n', ns, '--lease-namespace', opNs];

    const notDeleted = await run(args);
    assert.equal(notDeleted.code, 3, notDeleted.stderr);
    assert.match(notDeleted.stderr, /^error: aitask "stuck" in namespace ".*" is not being deleted/);

    await tasks.delete(ns, 'stuck');
    const dry = await run(args);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /Terminating for/);
    assert.match(dry.stdout, new RegExp(`${FINALIZER} +remove`));
    assert.match(dry.stdout, /Operator: absent: no leader Lease exists/);
    assert.match(dry.stdout, new RegExp(`${node} +uncordon +cordoned by this AITask`));
    assert.match(dry.stdout, new RegExp(`${foreign} +skip +not cordoned by this AITask`));
    assert.match(dry.stdout, /Dry run: nothing changed/);
    assert.equal((await nodes.get(undefined, node)).spec?.unschedulable, true);
    assert.deepEqual((await tasks.get(ns, 'stuck')).metadata.finalizers, [FINALIZER]);

    await lease(opNs, new Date());
    const alive = await run([...args, '--yes']);
    assert.equal(alive.code, 3);
    assert.match(
      alive.stderr,
      /^error: the operator is alive \(aiops-operator-abc renewed the leader Lease \d+s ago/,
    );
    assert.deepEqual((await tasks.get(ns, 'stuck')).metadata.finalizers, [FINALIZER]);
    const forced = JSON.parse((await run([...args, '--force', '-o', 'json'])).stdout) as {
      dryRun: boolean;
      plan: { operator: { verdict: string } };
    };
    assert.equal(forced.dryRun, true);
    assert.equal(forced.plan.operator.verdict, 'alive');

    await lease(opNs, new Date(Date.now() - 10 * 60_000));
    const yaml = await run([...args, '-o', 'yaml']);
    assert.match(yaml.stdout, /verdict: expired/);
    const yes = await run([...args, '--yes']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(
      yes.stdout,
      new RegExp(`node/${node} uncordoned\\nfinalizer ${FINALIZER} removed\\naitask "stuck" deleted`),
    );
    const after = await nodes.get(undefined, node);
    assert.notEqual(after.spec?.unschedulable, true);
    assert.equal(after.metadata?.annotations?.[CORDONED_BY_ANNOTATION], undefined, 'the mark is removed');
    assert.equal((await nodes.get(undefined, foreign)).spec?.unschedulable, true, 'not its cordon: left');
    await assert.rejects(tasks.get(ns, 'stuck'), { name: 'NotFoundError' });
  });

  void test('removes only our finalizer; --all removes the rest; --skip-cleanup leaves nodes cordoned', async (t) => {
    const ns = await freshNamespace('plugin-ff2', (fn) => t.after(fn));
    const node = `${ns}-node`;
    const nodes = await cordonedNode(node, (fn) => t.after(fn));
    const tasks = await testAITasks('v2');
    await tasks.create(ns, {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: 'two', finalizers: [FINALIZER, 'example.com/keep'] },
      spec: spec(),
    });
    await tasks.patchStatus(ns, 'two', { cordonedNodes: [node] });
    await tasks.delete(ns, 'two');
    const args = ['force-finalize', 'two', '-n', ns, '--lease-namespace', ns];
    const ours = JSON.parse((await run([...args, '--yes', '--skip-cleanup', '-o', 'json'])).stdout) as {
      outcome: { removedFinalizers: string[]; deleted: boolean };
    };
    assert.deepEqual(ours.outcome, { uncordoned: [], removedFinalizers: [FINALIZER], deleted: false });
    assert.deepEqual((await tasks.get(ns, 'two')).metadata.finalizers, ['example.com/keep']);
    assert.equal((await nodes.get(undefined, node)).spec?.unschedulable, true);
    const all = await run([...args, '--yes', '--all']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /finalizer example.com\/keep removed\naitask "two" deleted/);
  });
});

void describe('kubectl aiops generation-diff', () => {
  void test('a lagging observedGeneration shows the changed fields; in sync exits 0', async (t) => {
    const ns = await freshNamespace('plugin-gd', (fn) => t.after(fn));
    const tasks = await testAITasks('v2');
    const revisions = new ResourceClient(await testTransport(), Resources.controllerRevisions);
    const first = await tasks.create(ns, {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: 'web' },
      spec: { ...spec(), intervalSeconds: 30 },
    });
    await revisions.create(ns, buildRevision(first));
    await tasks.patchStatus(ns, 'web', { phase: 'Monitoring', observedGeneration: 1 });
    await tasks.patch(ns, 'web', {
      spec: { trigger: { threshold: 0.9 }, dryRun: true, intervalSeconds: null },
    });

    const lag = await run(['generation-diff', 'web', '-n', ns, '--color', 'never']);
    assert.equal(lag.code, 1, lag.stderr);
    assert.match(lag.stdout, /generation 2, observed 1 \(lagging by 1\)/);
    assert.match(
      lag.stdout,
      /spec changes from generation 1 to 2:\n {2}\+ spec\.dryRun: true\n {2}- spec\.intervalSeconds: 30\n {2}~ spec\.trigger\.threshold: 0\.8 → 0\.9\n/,
    );
    const coloured = await run(['generation-diff', 'web', '-n', ns, '--color', 'always']);
    assert.ok(coloured.stdout.includes('\u001b[32m  + spec.dryRun: true\u001b[39m'), coloured.stdout);
    const j = JSON.parse((await run(['generation-diff', 'web', '-n', ns, '-o', 'json'])).stdout) as {
      inSync: boolean;
      changes: { path: string; op: string }[];
    };
    assert.equal(j.inSync, false);
    assert.deepEqual(
      j.changes.map((c) => `${c.op} ${c.path}`),
      ['added spec.dryRun', 'removed spec.intervalSeconds', 'changed spec.trigger.threshold'],
    );
    assert.match((await run(['generation-diff', 'web', '-n', ns, '-o', 'yaml'])).stdout, /^inSync: false$/m);

    const explicit = await run(['generation-diff', 'web', '1', '2', '-n', ns]);
    assert.equal(explicit.code, 1);
    const same = await run(['generation-diff', 'web', '2', '2', '-n', ns]);
    assert.equal(same.code, 0, same.stderr);
    const missing = await run(['generation-diff', 'web', '5', '-n', ns]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^error: generation 5 of aitask "web" in namespace ".*" is not kept \(kept: 1, 2\)/,
    );

    await tasks.patchStatus(ns, 'web', { observedGeneration: 2 });
    const sync = await run(['generation-diff', 'web', '-n', ns]);
    assert.equal(sync.code, 0, sync.stderr);
    assert.match(sync.stdout, /generation 2, observed 2 \(in sync\)\nnothing to diff/);
  });
});

/**
 * A kubeconfig for a ServiceAccount of `ns` that may read and patch AITasks and read nodes,
 * but not read Leases anywhere: an on-call engineer's typical namespace-scoped access.
 */
async function withoutLeaseAccess(ns: string, after: (fn: () => Promise<void>) => void): Promise<string> {
  const admin = await testTransport();
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const name = `${ns}-oncall`;
  const post = (path: string, body: unknown): Promise<unknown> =>
    admin.request({ method: 'POST', path, body });
  await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'oncall' } });
  await post(`${rbac}/clusterroles`, {
    metadata: { name },
    rules: [
      { apiGroups: ['aiops.example.com'], resources: ['aitasks'], verbs: ['get', 'list', 'patch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
    ],
  });
  await post(`${rbac}/clusterrolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: 'oncall', namespace: ns }],
  });
  after(async () => {
    for (const kind of ['clusterrolebindings', 'clusterroles'])
      await admin.request({ method: 'DELETE', path: `${rbac}/${kind}/${name}` }).catch(() => undefined);
  });
  const review = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/oncall/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kc = fromYaml(readFileSync(KC, 'utf8')) as {
    'current-context'?: string;
    contexts: { name: string; context: { cluster: string } }[];
    clusters: { name: string; cluster: Record<string, unknown> }[];
  };
  const context = kc.contexts.find((c) => c.name === kc['current-context']) ?? kc.contexts[0];
  const cluster = kc.clusters.find((c) => c.name === context?.context.cluster);
  const dir = mkdtempSync(join(tmpdir(), 'aiops-oncall-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  });
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: cluster?.cluster }],
      users: [{ name: 'oncall', user: { token: review.status.token } }],
      contexts: [{ name: 'oncall', context: { cluster: 'test', user: 'oncall', namespace: ns } }],
      'current-context': 'oncall',
    }),
    { mode: 0o600 },
  );
  return path;
}

void test('force-finalize finds the operator Lease in whatever namespace it runs, and refuses when liveness is unknown unless --force', async (t) => {
  const ns = await freshNamespace('plugin-ffl', (fn) => t.after(fn));
  const opNs = await freshNamespace('plugin-fflop', (fn) => t.after(fn));
  const leaseName = `leader-${ns}`;
  const tasks = await testAITasks('v2');
  await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'stuck', finalizers: [FINALIZER] },
    spec: spec(),
  });
  t.after(async () => {
    await tasks.patch(ns, 'stuck', { metadata: { finalizers: null } }).catch(() => undefined);
  });
  await tasks.delete(ns, 'stuck');
  const leases = new ResourceClient(await testTransport(), Resources.leases);
  const putLease = async (renewed: Date): Promise<void> => {
    await leases.delete(opNs, leaseName).catch(() => undefined);
    await leases.create(opNs, {
      metadata: { name: leaseName, namespace: opNs },
      spec: { holderIdentity: 'aiops-operator-olm', leaseDurationSeconds: 15, renewTime: micro(renewed) },
    });
  };
  // No --lease-namespace: the Lease is in opNs (as OLM's `operators`), not aiops-system.
  const args = ['force-finalize', 'stuck', '-n', ns, '--lease-name', leaseName];

  await putLease(new Date());
  const alive = await run([...args, '--yes']);
  assert.equal(alive.code, 3, alive.stdout);
  assert.match(alive.stderr, new RegExp(`^error: the operator is alive .*Lease ${opNs}/${leaseName}`));
  assert.deepEqual((await tasks.get(ns, 'stuck')).metadata.finalizers, [FINALIZER]);

  await putLease(new Date(Date.now() - 10 * 60_000));
  const expired = await run(args);
  assert.equal(expired.code, 0, expired.stderr);
  assert.match(expired.stdout, new RegExp(`Operator: expired: .*\\(Lease ${opNs}/${leaseName}\\)`));

  const oncall = await withoutLeaseAccess(ns, (fn) => t.after(fn));
  const asOncall = (extra: readonly string[]): Promise<KubectlResult> =>
    kubectl(PATH, ['aiops', ...args, ...extra], { KUBECONFIG: oncall });
  const unknown = await asOncall(['--yes']);
  assert.equal(unknown.code, 3, unknown.stdout);
  assert.match(
    unknown.stderr,
    /^error: cannot tell whether the operator is alive \(.*Forbidden.*--force to act anyway/,
  );
  assert.deepEqual((await tasks.get(ns, 'stuck')).metadata.finalizers, [FINALIZER]);
  const forced = await asOncall(['--force']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /Operator: unknown: /);
  assert.match(forced.stdout, /Dry run: nothing changed/);
});
