// The shipped NetworkPolicies against the real apiserver's validation: each install path's
// policies (the plain manifests, the namespace-less file an OLM admin applies, the Helm chart
// with a changed metrics selector) go through `kubectl apply --server-side --dry-run=server`,
// and what the server would store keeps the ports and selectors sent (nothing dropped or
// defaulted away).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { CHART_DIR } from '../../scripts/olm/helm.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { kubectlWith } from '../harness/kubectl.ts';
import { ROOT } from '../olm/validators.ts';
import { freshNamespace, testKubeconfig } from '../support/cluster.ts';
import { helm, objectsOf, skipUnlessHelm, type K8sObject } from './helm.ts';

type Policy = K8sObject & { spec: unknown };

/** The NetworkPolicies of `yaml`, moved into `ns`. */
function policiesIn(yaml: string, ns: string): K8sObject[] {
  return objectsOf(yaml)
    .filter((o) => o.kind === 'NetworkPolicy')
    .map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } }));
}

/** What the server would store for `policies` on a server-side dry-run apply, by name. */
function dryRun(policies: readonly K8sObject[]): Map<string, unknown> {
  const out = kubectlWith(testKubeconfig())(
    ['apply', '--server-side', '--field-manager=aiops-test', '--dry-run=server', '-o', 'json', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: policies }),
  );
  const parsed = JSON.parse(out) as { items?: Policy[] } & Partial<Policy>;
  const items: Policy[] = parsed.items ?? [parsed as Policy];
  return new Map(items.map((o) => [o.metadata.name, o.spec]));
}

function assertKept(policies: readonly K8sObject[]): void {
  assert.ok(policies.length > 0);
  const stored = dryRun(policies);
  for (const p of policies) assert.deepEqual(stored.get(p.metadata.name), p['spec'], p.metadata.name);
}

test('the plain install and the OLM admin file: every policy accepted as sent', async (t) => {
  const ns = await freshNamespace('netpol', t.after.bind(t));
  for (const file of [PATHS.deploy, PATHS.networkPolicies])
    assertKept(policiesIn(readFileSync(join(ROOT, file), 'utf8'), ns));
});

test(
  "the Helm chart's policies with another metrics namespace selector: accepted as rendered",
  { skip: skipUnlessHelm() },
  async (t) => {
    const ns = await freshNamespace('netpol', t.after.bind(t));
    const r = helm([
      'template',
      'aiops',
      join(ROOT, CHART_DIR),
      '--namespace',
      DEFAULT_INSTALL.namespace,
      '--set',
      'prometheus.url=http://prometheus-operated.monitoring:9090',
      '--set',
      'networkPolicy.metricsNamespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assertKept(policiesIn(r.stdout, ns));
  },
);
