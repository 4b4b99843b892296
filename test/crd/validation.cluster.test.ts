// The generated CRD on the real apiserver: every served version is in discovery, valid
// objects of each version are accepted, `kubectl get at` shows the printer columns, and
// each class of bad input is rejected with a message naming the field (one case per rule),
// and a target of another kind is refused or accepted as `kubectl apply` shows it to a user.

import { kubectlWith } from '../harness/kubectl.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { InvalidError } from '../../lib/kube/errors.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import type { VersionName } from '../../api/crd.ts';

const G = 'aiops.example.com';

const valid: Record<VersionName, Record<string, unknown>> = {
  v1alpha1: { target: 'web', threshold: 80, action: 'ScaleUp', interval: '90s' },
  v1: { targetDeployment: 'web', threshold: 0.8, action: 'scale_up', intervalSeconds: 60 },
  v2: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 0.8 },
    remediation: { action: 'ScaleUp' },
  },
};

async function create(version: VersionName, ns: string, name: string, spec: unknown): Promise<unknown> {
  const client = await testAITasks(version);
  const body = {
    apiVersion: `${G}/${version}`,
    kind: 'AITask',
    metadata: { name, namespace: ns },
    ...(spec === undefined ? {} : { spec }),
  };
  return client.create(ns, body as never);
}

test('every served version is in discovery', async () => {
  const transport = await testTransport();
  for (const v of ['v1alpha1', 'v1', 'v2']) {
    const list = await transport.request<{ resources: { name: string; shortNames?: string[] }[] }>({
      path: `/apis/${G}/${v}`,
    });
    const r = list.resources.find((x) => x.name === 'aitasks');
    assert.ok(r, `aitasks served at ${v}`);
    assert.deepEqual(r.shortNames, ['at']);
  }
});

test('valid objects of each version are accepted and listed with printer columns', async (t) => {
  const ns = await freshNamespace('crd-valid', t.after.bind(t));
  for (const v of ['v1alpha1', 'v1', 'v2'] as const) await create(v, ns, `ok-${v}`, valid[v]);
  const out = kubectlWith(testKubeconfig())(['get', 'at', '-n', ns]);
  const [header, ...rows] = out.trim().split('\n');
  assert.match(header ?? '', /^NAME\s+TARGET\s+THRESHOLD\s+ACTION\s+PHASE\s+AGE$/);
  assert.equal(rows.length, 3);
  assert.match(out, /ok-v1alpha1\s+web\s+0.8\s+ScaleUp/);
});

test('bad input is rejected by the apiserver with a message naming the field', async (t) => {
  const ns = await freshNamespace('crd-invalid', t.after.bind(t));
  const v2 = valid.v2;
  const cases: [string, VersionName, unknown, RegExp][] = [
    ['missing spec', 'v2', undefined, /spec: Required value/],
    [
      'empty target (v1alpha1)',
      'v1alpha1',
      { ...valid.v1alpha1, target: '' },
      /spec.target: Invalid value: "": spec.target in body should be at least 1 chars long/,
    ],
    ['empty target name (v2)', 'v2', { ...v2, target: { kind: 'Deployment', name: '' } }, /spec.target.name/],
    [
      'negative threshold (v1)',
      'v1',
      { ...valid.v1, threshold: -0.1 },
      /spec.threshold: Invalid value: -0.1: spec.threshold in body should be greater than or equal to 0/,
    ],
    [
      'percent above 100 (v1alpha1)',
      'v1alpha1',
      { ...valid.v1alpha1, threshold: 101 },
      /spec.threshold.*less than or equal to 100/,
    ],
    [
      'unknown action (v1)',
      'v1',
      { ...valid.v1, action: 'reboot' },
      /spec.action: Unsupported value: "reboot"/,
    ],
    [
      'unknown action (v2)',
      'v2',
      { ...v2, remediation: { action: 'Reboot' } },
      /spec.remediation.action: Unsupported value: "Reboot"/,
    ],
    [
      'interval out of range (v1)',
      'v1',
      { ...valid.v1, intervalSeconds: 5 },
      /spec.intervalSeconds.*greater than or equal to 10/,
    ],
    [
      'interval out of range (v1alpha1, CEL)',
      'v1alpha1',
      { ...valid.v1alpha1, interval: '2h' },
      /spec.interval: Invalid value.*interval must be between 10s and 1h/,
    ],
    [
      'interval not a duration (v1alpha1)',
      'v1alpha1',
      { ...valid.v1alpha1, interval: 'soon' },
      /spec.interval.*should match/,
    ],
    [
      'wrong type: threshold string (v1)',
      'v1',
      { ...valid.v1, threshold: 'high' },
      /spec.threshold: Invalid value: "string": spec.threshold in body must be of type number/,
    ],
    [
      'wrong type: target object (v1alpha1)',
      'v1alpha1',
      { ...valid.v1alpha1, target: { name: 'x' } },
      /spec.target: Invalid value: "object": spec.target in body must be of type string/,
    ],
    [
      'min above max replicas (v2, CEL)',
      'v2',
      { ...v2, remediation: { action: 'ScaleUp', scale: { minReplicas: 5, maxReplicas: 2 } } },
      /spec.remediation.scale: Invalid value.*minReplicas must not exceed maxReplicas/,
    ],
    [
      'LLM mode without llm (v2, CEL)',
      'v2',
      { ...v2, decision: { mode: 'LLM' } },
      /spec.decision: Invalid value.*decision.llm is required when mode is LLM/,
    ],
    ['endpoint not a URI (v1)', 'v1', { ...valid.v1, llmEndpoint: 'not a url' }, /spec.llmEndpoint.*uri/],
    [
      'unknown operator (v2)',
      'v2',
      { ...v2, trigger: { threshold: 1, operator: 'Equals' } },
      /spec.trigger.operator: Unsupported value: "Equals"/,
    ],
    ['bad namespace name (v1)', 'v1', { ...valid.v1, namespace: 'Bad_NS' }, /spec.namespace.*should match/],
    [
      'a kind other than Deployment and StatefulSet without its apiVersion (v2, CEL)',
      'v2',
      { ...v2, target: { kind: 'Shard', name: 'redis' } },
      /spec.target: Invalid value.*target.apiVersion is required for a kind other than Deployment and StatefulSet/,
    ],
    [
      'target apiVersion not a group/version (v2)',
      'v2',
      { ...v2, target: { apiVersion: 'db.example.com/V1', kind: 'Shard', name: 'redis' } },
      /spec.target.apiVersion.*should match/,
    ],
    [
      'target kind not a kind name (v2)',
      'v2',
      { ...v2, target: { apiVersion: 'db.example.com/v1', kind: 'shard', name: 'redis' } },
      /spec.target.kind.*should match/,
    ],
    [
      'target kind too long (v2)',
      'v2',
      { ...v2, target: { apiVersion: 'db.example.com/v1', kind: `S${'x'.repeat(63)}`, name: 'redis' } },
      /spec.target.kind.*Too long: may not be (longer|more) than 63/,
    ],
  ];
  for (const [name, version, spec, message] of cases) {
    await t.test(name, async () => {
      const err = await create(version, ns, 'bad', spec).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof InvalidError, `expected 422 Invalid, got ${String(err)}`);
      assert.match(err.message, message);
    });
  }
});

test('kubectl apply of a v2 target of another kind: refused without its apiVersion or with a malformed one, accepted with it, and kept through v1', async (t) => {
  const ns = await freshNamespace('crd-target-kind', t.after.bind(t));
  const kubectl = kubectlWith(testKubeconfig());
  const manifest = (target: Record<string, unknown>): string =>
    JSON.stringify({
      apiVersion: `${G}/v2`,
      kind: 'AITask',
      metadata: { name: 'shard-heal', namespace: ns },
      spec: { ...valid.v2, target },
    });
  const refusal = (target: Record<string, unknown>): string => {
    try {
      kubectl(['apply', '-f', '-'], manifest(target));
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail(`kubectl apply accepted ${JSON.stringify(target)}`);
  };
  assert.match(
    refusal({ kind: 'Shard', name: 'redis' }),
    /spec.target: Invalid value: "object": target.apiVersion is required for a kind other than Deployment and StatefulSet/,
  );
  assert.match(
    refusal({ apiVersion: 'db.example.com/1', kind: 'Shard', name: 'redis' }),
    /spec.target.apiVersion: Invalid value: "db.example.com\/1": spec.target.apiVersion in body should match/,
  );
  const target = { apiVersion: 'db.example.com/v1beta1', kind: 'Shard', name: 'redis' };
  assert.match(
    kubectl(['apply', '-f', '-'], manifest(target)),
    /aitask.aiops.example.com\/shard-heal created/,
  );
  const read = (resource: string, path: string): string =>
    kubectl(['get', resource, 'shard-heal', '-n', ns, '-o', `jsonpath=${path}`]);
  assert.deepEqual(JSON.parse(read(`aitasks.v2.${G}`, '{.spec.target}')), target);
  assert.equal(
    read(`aitasks.v1.${G}`, '{.spec.targetDeployment}'),
    'redis',
    'v1 reads it as targetDeployment',
  );
  const v1 = JSON.parse(kubectl(['get', `aitasks.v1.${G}`, 'shard-heal', '-n', ns, '-o', 'json'])) as {
    spec: Record<string, unknown>;
  };
  kubectl(
    ['replace', '-f', '-'],
    JSON.stringify({ ...v1, spec: { ...v1.spec, targetDeployment: 'valkey' } }),
  );
  assert.deepEqual(
    JSON.parse(read(`aitasks.v2.${G}`, '{.spec.target}')),
    { ...target, name: 'valkey' },
    'renamed through v1, it keeps its kind and apiVersion',
  );
});

test('v1alpha1 answers with a deprecation warning', async (t) => {
  const ns = await freshNamespace('crd-deprecated', t.after.bind(t));
  const out = kubectlWith(testKubeconfig())(['get', `aitasks.v1alpha1.${G}`, '-n', ns]);
  assert.equal(out, '');
  // kubectl's warning goes to stderr, which only a shell redirect brings to the output here.
  const warn = execFileSync(
    'sh',
    ['-c', `kubectl --kubeconfig ${testKubeconfig()} get aitasks.v1alpha1.${G} -n ${ns} 2>&1 >/dev/null`],
    { encoding: 'utf8' },
  );
  assert.match(warn, /Warning: aiops.example.com\/v1alpha1 AITask is deprecated/);
});
