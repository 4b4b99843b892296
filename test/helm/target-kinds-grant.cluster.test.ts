// The grant an admin makes so AITasks may target another kind, against the real apiserver's
// authorizer: docs/install.md's ClusterRole and ClusterRoleBinding, applied as the page shows
// them (bound to a ServiceAccount of this test's own, so the shared operator identity is never
// widened; beside a Rollout CRD, so kubectl can resolve the kind), let the page's own `kubectl
// auth can-i` check say yes, and nothing beyond the scale subresource; and the rules the Helm chart renders for a custom kind (a CRD serving /scale,
// defined here in a group of this run's own) let the operator's ServiceAccount do exactly what
// the operator does with such a target: GET and PUT its /scale, and LIST its intermediate
// controller kind by name. Before the grant each of these is Forbidden; after it the object
// itself stays unreadable.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { OPERATOR_CLUSTER_RULES, type PolicyRule } from '../../api/rbac.ts';
import { ForbiddenError } from '../../lib/kube/errors.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { CHART_DIR } from '../../scripts/olm/helm.ts';
import { targetKindGrant, targetKindRules, type TargetKind } from '../../scripts/olm/target-kinds.ts';
import { allEstablished } from '../harness/crds.ts';
import { eventually } from '../harness/wait.ts';
import { kubectlWith } from '../harness/kubectl.ts';
import { ROOT } from '../olm/validators.ts';
import { freshNamespace, testKubeconfig, testTransport } from '../support/cluster.ts';
import { serviceAccountKubeconfig } from '../support/operator-identity.ts';
import { docBlock } from './doc-block.ts';
import {
  helmWithTargetKinds,
  objectsOf,
  operatorClusterRules,
  skipUnlessHelm,
  type K8sObject,
} from './helm.ts';

const PAGE = 'docs/install.md';
const HEADING = '## Targeting other kinds';
const SA = DEFAULT_INSTALL.serviceAccount;

/** `kubectl auth can-i ARGS` as admin: whether the authorizer says yes (kubectl exits 1 for no). */
function canI(args: readonly string[]): boolean {
  try {
    execFileSync('kubectl', [`--kubeconfig=${testKubeconfig()}`, 'auth', 'can-i', ...args], {
      stdio: 'pipe',
    });
    return true;
  } catch (err) {
    const e = err as { status?: number; stdout?: Buffer; stderr?: Buffer };
    if (e.status === 1 && e.stdout?.toString().trim() === 'no') return false;
    throw err;
  }
}

/** Applies `objects` as admin and deletes them when the test ends. */
function applyFor(t: TestContext, objects: readonly K8sObject[]): void {
  const kubectl = kubectlWith(testKubeconfig());
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
  kubectl(['apply', '--server-side', '--field-manager=aiops-test', '-f', '-'], list);
  t.after(() => {
    kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], list);
  });
}

/** The doc's grant with its names made this test's and its subject the ServiceAccount `ns`/aiops-operator. */
function documentedGrant(ns: string, name: string): K8sObject[] {
  return objectsOf(docBlock(PAGE, HEADING, 'yaml', 'kind: ClusterRoleBinding')).map((o) => {
    const subjects = o['subjects'] as { kind: string; name: string; namespace: string }[] | undefined;
    assert.ok(subjects === undefined || subjects.every((s) => s.kind === 'ServiceAccount' && s.name === SA));
    return {
      ...o,
      metadata: { ...o.metadata, name },
      ...(o['roleRef'] !== undefined ? { roleRef: { ...(o['roleRef'] as object), name } } : {}),
      ...(subjects !== undefined ? { subjects: subjects.map((s) => ({ ...s, namespace: ns })) } : {}),
    };
  });
}

/** The rules the chart adds to the operator's ClusterRole for `kinds`. */
function chartRules(kinds: readonly TargetKind[]): PolicyRule[] {
  const r = helmWithTargetKinds('template', join(ROOT, CHART_DIR), kinds);
  assert.equal(r.code, 0, r.stderr);
  const rules = operatorClusterRules(objectsOf(r.stdout)) as PolicyRule[];
  assert.deepEqual(rules.slice(0, OPERATOR_CLUSTER_RULES.length), OPERATOR_CLUSTER_RULES);
  return rules.slice(OPERATOR_CLUSTER_RULES.length);
}

/** A namespaced CRD of `kind` in `group` at `version`, keeping any field, serving /scale when `scale`. */
function crd(group: string, version: string, kind: string, plural: string, scale: boolean): K8sObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      scope: 'Namespaced',
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          ...(scale
            ? {
                subresources: {
                  scale: {
                    specReplicasPath: '.spec.replicas',
                    statusReplicasPath: '.status.replicas',
                    labelSelectorPath: '.status.selector',
                  },
                },
              }
            : {}),
        },
      ],
    },
  };
}

/** Resolves once each CRD in `names` is Established, as the apiserver answers it (a throw, a 404 say, is "not yet"). */
async function established(names: readonly string[]): Promise<void> {
  const kubectl = kubectlWith(testKubeconfig());
  await eventually(`CRDs Established: ${names.join(', ')}`, () =>
    allEstablished(names, (path) => Promise.resolve({ status: 200, body: kubectl(['get', '--raw', path]) })),
  );
}

/**
 * Argo's Rollout CRD as far as RBAC and kubectl's discovery need it (kubectl auth can-i asks
 * about a kind it cannot find as another resource), unless the cluster has one: then kept.
 */
async function rolloutKind(t: TestContext): Promise<void> {
  const kubectl = kubectlWith(testKubeconfig());
  const name = 'rollouts.argoproj.io';
  if (kubectl(['get', 'crd', '--ignore-not-found', '-o', 'name', name]).trim() === '') {
    applyFor(t, [crd('argoproj.io', 'v1alpha1', 'Rollout', 'rollouts', true)]);
  }
  await established([name]);
  await eventually('the Rollout kind is served', () =>
    kubectl(['api-resources', '--api-group=argoproj.io', '-o', 'name']).includes(name) ? true : undefined,
  );
}

test('the documented grant: can-i says yes for the scale subresource only', async (t) => {
  const ns = await freshNamespace('grant', t.after.bind(t));
  await rolloutKind(t);
  kubectlWith(testKubeconfig())(['-n', ns, 'create', 'serviceaccount', SA]);
  const as = `--as=system:serviceaccount:${ns}:${SA}`;
  const scale = ['update', 'rollouts.argoproj.io', '--subresource=scale', as];
  assert.equal(canI(scale), false, 'nothing granted yet');
  applyFor(t, documentedGrant(ns, `aiops-test-${ns}`));
  // The page's own check, with the install namespace this test's.
  const check = docBlock(PAGE, HEADING, 'sh', 'kubectl auth can-i').replaceAll(
    `system:serviceaccount:${DEFAULT_INSTALL.namespace}:`,
    `system:serviceaccount:${ns}:`,
  );
  const said = await eventually('the documented check says yes', () => {
    const out = execFileSync('bash', ['-c', check], {
      env: { ...process.env, KUBECONFIG: testKubeconfig() },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.trim() === 'yes' ? out : undefined;
  });
  assert.equal(said.trim(), 'yes');
  assert.equal(canI(['get', 'rollouts.argoproj.io', '--subresource=scale', as]), true);
  for (const denied of [
    ['get', 'rollouts.argoproj.io', as],
    ['update', 'rollouts.argoproj.io', as],
    ['list', 'rollouts.argoproj.io', as],
    ['patch', 'rollouts.argoproj.io', '--subresource=scale', as],
  ])
    assert.equal(canI(denied), false, denied.join(' '));
});

test(
  "the chart's rules for a custom kind: its /scale read and written, its intermediate kind listed by name",
  { skip: skipUnlessHelm() },
  async (t) => {
    const ns = await freshNamespace('grant', t.after.bind(t));
    const group = `${ns}.test.aiops.example.com`;
    const admin = await testTransport();
    const kubectl = kubectlWith(testKubeconfig());
    applyFor(t, [
      crd(group, 'v1', 'Shard', 'shards', true),
      crd(group, 'v1', 'ShardSet', 'shardsets', false),
    ]);
    await established([`shards.${group}`, `shardsets.${group}`]);
    const base = `/apis/${group}/v1/namespaces/${ns}`;
    await eventually('the Shard kind is served', () =>
      admin
        .request({
          method: 'POST',
          path: `${base}/shards`,
          body: { apiVersion: `${group}/v1`, kind: 'Shard', metadata: { name: 's1' }, spec: { replicas: 2 } },
        })
        .then(() => true),
    );
    kubectl(['-n', ns, 'create', 'serviceaccount', SA]);
    const dir = mkdtempSync(join(tmpdir(), 'aiops-grant-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const operator = await KubeTransport.create({
      kubeconfig: await serviceAccountKubeconfig(
        admin,
        testKubeconfig(),
        ns,
        SA,
        join(dir, 'kubeconfig'),
        600,
      ),
    });
    type Scale = { apiVersion: string; kind: string; metadata: object; spec: { replicas: number } };
    const getScale = (): Promise<Scale> => operator.request<Scale>({ path: `${base}/shards/s1/scale` });
    const listOwner = (): Promise<unknown> =>
      operator.request({ path: `${base}/shardsets`, query: { fieldSelector: 'metadata.name=s1-abc' } });
    await assert.rejects(getScale(), ForbiddenError, 'no grant yet');
    await assert.rejects(listOwner(), ForbiddenError, 'no grant yet');

    const kind: TargetKind = { apiGroup: group, resources: ['shards'], ownerResources: ['shardsets'] };
    const rules = chartRules([kind]);
    assert.deepEqual(rules, targetKindRules(kind));
    const [role, binding] = targetKindGrant(kind, { name: `aiops-test-${ns}`, namespace: ns }) as K8sObject[];
    assert.ok(role && binding);
    applyFor(t, [{ ...role, rules }, binding]);

    const scale = await eventually('GET /scale is allowed', () => getScale().catch(() => undefined));
    assert.equal(scale.spec.replicas, 2);
    await operator.request({
      method: 'PUT',
      path: `${base}/shards/s1/scale`,
      body: { ...scale, spec: { replicas: 3 } },
    });
    const shard = await admin.request<{ spec: { replicas: number } }>({ path: `${base}/shards/s1` });
    assert.equal(shard.spec.replicas, 3, 'the PUT scaled the Shard');
    const owners = (await listOwner()) as { items: unknown[] };
    assert.deepEqual(owners.items, [], 'a LIST by name answers');
    await assert.rejects(
      operator.request({ path: `${base}/shards/s1` }),
      ForbiddenError,
      'the object itself stays unreadable',
    );
    await assert.rejects(
      operator.request({
        method: 'PATCH',
        path: `${base}/shards/s1/scale`,
        patchType: 'merge',
        body: { spec: { replicas: 9 } },
      }),
      ForbiddenError,
      'only get and update on /scale',
    );
  },
);
