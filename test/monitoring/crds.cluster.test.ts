// The monitoring objects against the real schemas: prometheus-operator's own ServiceMonitor
// and PrometheusRule CRDs (v0.85.0, from its Go module) installed on the test apiserver take
// the shipped objects as they are (nothing pruned: every field we send is in the schema) and
// refuse a broken one; the metrics Service and the dashboard ConfigMap are created as sent;
// kubectl applies deploy/aiops-monitoring.yaml as docs/operator.md says.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CustomResourceDefinition } from '../../api/crd.ts';
import { fromYaml } from '../../lib/yaml.ts';
import { installCRD } from '../../scripts/lib/crd-install.ts';
import { dashboard } from '../../scripts/monitoring/dashboard.ts';
import { jobName, monitoringObjects, serviceMonitor } from '../../scripts/monitoring/objects.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { kubectlWith } from '../harness/kubectl.ts';
import { freshNamespace, testKubeconfig, testTransport } from '../support/cluster.ts';
import { MONITORING_CRD_FILES, monitoringCRDsDir, ROOT, skipUnlessPresent } from './tools.ts';

const skip = skipUnlessPresent(join(monitoringCRDsDir(), MONITORING_CRD_FILES[1]), 'monitoring-crds');

let installing: Promise<void> | undefined;
/** Installs (once per file) prometheus-operator's CRDs on the shared cluster and waits until they are served. */
function crdsInstalled(): Promise<void> {
  installing ??= (async () => {
    const admin = await testTransport();
    for (const file of MONITORING_CRD_FILES)
      await installCRD(
        admin,
        fromYaml(readFileSync(join(monitoringCRDsDir(), file), 'utf8')) as CustomResourceDefinition,
      );
  })();
  return installing;
}

/** Collection path of `o` in namespace `ns`. */
function collection(o: Record<string, unknown>, ns: string): string {
  const plural: Record<string, string> = {
    Service: 'services',
    ConfigMap: 'configmaps',
    ServiceMonitor: 'servicemonitors',
    PrometheusRule: 'prometheusrules',
  };
  const kind = String(o['kind']);
  const apiVersion = String(o['apiVersion']);
  const base = apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`;
  return `${base}/namespaces/${ns}/${plural[kind] ?? kind}`;
}

test(
  "prometheus-operator's CRDs take the ServiceMonitor and PrometheusRule as shipped; the Service and dashboard ConfigMap are created as sent",
  { skip },
  async (t) => {
    await crdsInstalled();
    const admin = await testTransport();
    const ns = await freshNamespace('monitoring', (fn) => t.after(fn));
    const objects = monitoringObjects({ namespace: ns });
    assert.deepEqual(
      objects.map((o) => o['kind']),
      ['Service', 'ServiceMonitor', 'PrometheusRule', 'ConfigMap'],
    );
    for (const o of objects) {
      const created = await admin.request<Record<string, unknown>>({
        method: 'POST',
        path: collection(o, ns),
        body: o,
      });
      const key = o['kind'] === 'ConfigMap' ? 'data' : 'spec';
      const sent = o[key] as Record<string, unknown>;
      const got = created[key] as Record<string, unknown>;
      // The apiserver fills in defaults on a Service (clusterIP, sessionAffinity, …): compare what we sent.
      const pick = (from: Record<string, unknown>, like: Record<string, unknown>): Record<string, unknown> =>
        Object.fromEntries(Object.keys(like).map((k) => [k, from[k]]));
      const kept =
        o['kind'] === 'Service'
          ? {
              ...pick(got, sent),
              ports: (got['ports'] as Record<string, unknown>[]).map((p, i) =>
                pick(p, (sent['ports'] as Record<string, unknown>[])[i] ?? {}),
              ),
            }
          : got;
      assert.deepEqual(kept, sent, `${String(o['kind'])}: nothing pruned or changed`);
    }
    const cm = objects.find((o) => o['kind'] === 'ConfigMap') as { data: Record<string, string> };
    assert.deepEqual(JSON.parse(cm.data['aiops-operator.json'] ?? ''), dashboard(jobName()));
  },
);

test('the ServiceMonitor and PrometheusRule schemas refuse a broken object', { skip }, async (t) => {
  await crdsInstalled();
  const admin = await testTransport();
  const ns = await freshNamespace('monitoring-bad', (fn) => t.after(fn));
  const sm = serviceMonitor({ namespace: ns }) as { spec: { endpoints: Record<string, unknown>[] } };
  const badScheme = structuredClone(sm);
  badScheme.spec.endpoints[0] = { ...badScheme.spec.endpoints[0], scheme: 'ftp' };
  await assert.rejects(
    admin.request({
      method: 'POST',
      path: collection(badScheme, ns),
      body: badScheme,
      query: { dryRun: 'All' },
    }),
    /scheme/,
  );
  const rule = monitoringObjects({ namespace: ns })[2] as {
    spec: { groups: { rules: Record<string, unknown>[] }[] };
  };
  const badFor = structuredClone(rule);
  const first = badFor.spec.groups[0]?.rules[0];
  assert.ok(first);
  first['for'] = 'five minutes';
  await assert.rejects(
    admin.request({ method: 'POST', path: collection(badFor, ns), body: badFor, query: { dryRun: 'All' } }),
    /for/,
  );
});

test(
  "docs/operator.md's commands: kubectl applies deploy/aiops-monitoring.yaml into the operator's namespace, and the scraper binding",
  { skip },
  async (t) => {
    await crdsInstalled();
    const ns = await freshNamespace('monitoring-apply', (fn) => t.after(fn));
    const kubectl = kubectlWith(testKubeconfig());
    // As the OLM instructions do with sed: the plain install's namespace swapped for the operator's.
    const manifest = readFileSync(join(ROOT, PATHS.monitoring), 'utf8');
    assert.match(manifest, new RegExp(`namespace: ${DEFAULT_INSTALL.namespace}\\n`));
    const out = kubectl(
      ['apply', '-f', '-'],
      manifest.replaceAll(`namespace: ${DEFAULT_INSTALL.namespace}`, `namespace: ${ns}`),
    );
    for (const o of monitoringObjects())
      assert.match(
        out,
        new RegExp(
          `${String(o['kind']).toLowerCase()}[^ ]*/${(o['metadata'] as { name: string }).name} created`,
        ),
      );
    const binding = kubectl([
      'create',
      'clusterrolebinding',
      'prometheus-aiops-metrics',
      '--clusterrole=aiops-metrics-reader',
      '--serviceaccount=monitoring:prometheus-k8s',
      '--dry-run=server',
    ]);
    assert.match(binding, /prometheus-aiops-metrics created \(server dry run\)/);
  },
);
