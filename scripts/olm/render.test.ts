// The generator's contract: deterministic output, equal to what is committed (the same
// check CI's drift gate makes), a CSV and plain install that agree on RBAC and pod, a CSV
// whose upgrade edges equal the default channel's, and clear errors for bad versions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { VERSIONS } from '../../api/crd.ts';
import { OPERATOR_CLUSTER_RULES, OPERATOR_NAMESPACE_RULES } from '../../api/rbac.ts';
import { RELEASES, type Release } from '../../api/releases.ts';
import { fromYaml } from '../../lib/yaml.ts';
import { buildCSV } from './csv.ts';
import { plainManifests } from './plain.ts';
import { renderRelease } from './render.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkgVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
  .version;
const rel = (version: string, channels: Release['channels'] = ['candidate', 'stable']): Release => ({
  version,
  channels,
  date: '2026-01-01',
});

test('rendering is deterministic and matches the committed files', () => {
  const a = renderRelease(pkgVersion, RELEASES);
  const b = renderRelease(pkgVersion, RELEASES);
  assert.deepEqual([...a.entries()], [...b.entries()]);
  for (const [path, content] of a) {
    assert.equal(readFileSync(join(root, path), 'utf8'), content, `${path} is stale: run npm run generate`);
  }
});

test('bad versions are refused with the reason', () => {
  assert.throws(() => renderRelease('1.0', RELEASES), /not semver/);
  assert.throws(() => renderRelease('9.9.9', RELEASES), /must be the newest release in api\/releases\.ts/);
});

test('the CSV owns every version with an example, and carries the default channel edges', () => {
  const releases = [rel('1.0.0'), rel('1.1.0-rc.1', ['candidate']), rel('1.1.0')];
  const last = releases.at(-1);
  assert.ok(last);
  const csv = buildCSV(last, releases);
  assert.equal(csv.metadata.name, 'aiops-operator.v1.1.0');
  assert.equal(csv.spec.replaces, 'aiops-operator.v1.0.0');
  assert.equal(csv.metadata.annotations['olm.skipRange'], '>=1.0.0 <1.1.0');
  const examples = JSON.parse(csv.metadata.annotations['alm-examples'] ?? '[]') as { apiVersion: string }[];
  assert.deepEqual(
    examples.map((e) => e.apiVersion),
    VERSIONS.map((v) => `aiops.example.com/${v}`),
  );
  const owned = (csv.spec['customresourcedefinitions'] as { owned: { version: string }[] }).owned;
  assert.deepEqual(
    owned.map((o) => o.version),
    [...VERSIONS],
  );
  const first = buildCSV(rel('1.0.0'), [rel('1.0.0')]);
  assert.equal(first.spec.replaces, undefined);
  assert.equal(first.metadata.annotations['olm.skipRange'], undefined);
});

test('the plain install grants exactly the CSV RBAC and runs the same pod', () => {
  const csv = buildCSV(rel(pkgVersion), [rel(pkgVersion)]);
  const install = (csv.spec['install'] as { spec: Record<string, { rules?: unknown; spec?: unknown }[]> })
    .spec;
  const objects = plainManifests(pkgVersion) as {
    kind: string;
    rules?: unknown;
    spec?: { template?: unknown };
  }[];
  const of = (kind: string): { rules?: unknown; spec?: { template?: unknown } } | undefined =>
    objects.find((o) => o.kind === kind);
  assert.deepEqual(install['clusterPermissions']?.[0]?.rules, OPERATOR_CLUSTER_RULES);
  assert.deepEqual(install['permissions']?.[0]?.rules, OPERATOR_NAMESPACE_RULES);
  assert.deepEqual(of('ClusterRole')?.rules, OPERATOR_CLUSTER_RULES);
  assert.deepEqual(of('Role')?.rules, OPERATOR_NAMESPACE_RULES);
  const csvPod = (
    install['deployments']?.[0]?.spec as { template: { spec: { containers: { args?: string[] }[] } } }
  ).template;
  const csvContainer = { ...csvPod.spec.containers[0] };
  const csvArgs = csvContainer.args ?? [];
  assert.deepEqual(
    csvArgs.slice(-1),
    ['--webhook-cert-from-secret=aiops-operator-service-cert'],
    'on OLM the webhook also follows the certificate Secret OLM issues (<deployment>-service-cert)',
  );
  const plainPod = of('Deployment')?.spec?.template as {
    spec: { containers: { volumeMounts?: unknown; args?: string[] }[] };
  };
  const plainContainer = { ...plainPod.spec.containers[0] };
  delete plainContainer.volumeMounts;
  const args = plainContainer.args ?? [];
  assert.deepEqual(
    args.slice(-2),
    ['--self-signed-cert', '--webhook-secret=aiops-webhook-service-cert'],
    'the plain install issues its own webhook certificate (no OLM to inject one)',
  );
  assert.deepEqual(
    { ...plainContainer, args: args.slice(0, -2) },
    { ...csvContainer, args: csvArgs.slice(0, -1) },
    'same container apart from the certificate mount and its issuing',
  );
});

test('the committed plain install parses as the objects kubectl will apply, in order', () => {
  const docs = loadAll(readFileSync(join(root, 'deploy/aiops-operator.yaml'), 'utf8')) as { kind: string }[];
  assert.deepEqual(
    docs.map((d) => d.kind),
    [
      'Namespace',
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ClusterRole',
      'Role',
      'RoleBinding',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'NetworkPolicy',
      'NetworkPolicy',
      'NetworkPolicy',
    ],
  );
  const annotations = fromYaml(readFileSync(join(root, 'bundle/metadata/annotations.yaml'), 'utf8')) as {
    annotations: Record<string, string>;
  };
  assert.equal(annotations.annotations['operators.operatorframework.io.bundle.mediatype.v1'], 'registry+v1');
});
