// The monitoring objects fit together and with the operator's pod: the Service selects the
// operator's pods on ports its container names, the ServiceMonitor selects the Service and
// scrapes ports it has, every alert and panel reads the job named after the Service (also when
// the chart renames it), the dashboard is well-formed Grafana JSON, and the bundle carries
// exactly the core-kind objects.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fromYaml } from '../../lib/yaml.ts';
import { deploymentSpec, OPERATOR_LABELS } from '../olm/deployment.ts';
import { PATHS } from '../olm/render.ts';
import { alertDefs } from './alerts.ts';
import { dashboard, panelQueries } from './dashboard.ts';
import {
  bundleMonitoringObjects,
  dashboardConfigMap,
  jobName,
  metricsService,
  monitoringObjects,
  prometheusRule,
  serviceMonitor,
} from './objects.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface Port {
  name: string;
  targetPort?: string;
}

test('the Service selects the operator pods on ports the container names; the ServiceMonitor selects the Service and its ports', () => {
  const svc = metricsService() as {
    metadata: { labels: Record<string, string> };
    spec: { selector: Record<string, string>; ports: Port[] };
  };
  assert.deepEqual(svc.spec.selector, OPERATOR_LABELS);
  const pod = deploymentSpec({ image: 'x' }) as {
    template: { spec: { containers: { ports: { name: string }[] }[] } };
  };
  const containerPorts = pod.template.spec.containers[0]?.ports.map((p) => p.name) ?? [];
  for (const p of svc.spec.ports) assert.ok(containerPorts.includes(p.targetPort ?? ''), p.name);
  const sm = serviceMonitor() as {
    spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
  };
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata.labels[k], v);
  assert.deepEqual(
    sm.spec.endpoints.map((e) => e.port),
    svc.spec.ports.map((p) => p.name),
  );
});

test("every alert and panel reads the Service's job, also under another Service name", () => {
  for (const job of [jobName(), 'renamed-metrics']) {
    const exprs = [
      ...alertDefs(job).flatMap((a) => [a.expr, a.vector]),
      ...panelQueries(job).map((q) => q.expr),
    ];
    for (const e of exprs) {
      const selectors = e.match(/\{[^}]*\}/g) ?? [];
      assert.ok(selectors.length > 0, e);
      for (const s of selectors) if (!s.startsWith('{{')) assert.ok(s.includes(`job="${job}"`), `${e}: ${s}`);
    }
  }
  const renamed = { serviceName: 'renamed-metrics', namespace: 'ns', selectorLabels: { release: 'kps' } };
  const rule = prometheusRule(renamed) as {
    metadata: { labels: Record<string, string> };
    spec: { groups: { rules: { expr: string }[] }[] };
  };
  assert.equal(rule.metadata.labels['release'], 'kps');
  assert.match(rule.spec.groups[0]?.rules[0]?.expr ?? '', /job="renamed-metrics"/);
  assert.equal(
    (serviceMonitor(renamed) as { metadata: { labels: Record<string, string> } }).metadata.labels['release'],
    'kps',
  );
  for (const o of monitoringObjects(renamed))
    assert.equal((o['metadata'] as { namespace: string }).namespace, 'ns');
});

test('every alert has a severity, a summary, a description and what to do', () => {
  const names = new Set<string>();
  for (const a of alertDefs(jobName())) {
    assert.match(a.alert, /^AIOps[A-Z]\w+$/);
    assert.ok(!names.has(a.alert), `${a.alert} once`);
    names.add(a.alert);
    assert.ok(a.summary.length > 0 && a.description.length > 0 && a.action.length > 0, a.alert);
    assert.ok(a.expr.includes(a.vector), `${a.alert}: its expression compares its vector`);
  }
});

test('the dashboard is Grafana JSON: unique ids, panels inside 24 columns without overlap, a query and datasource per target, in a sidecar-labelled ConfigMap', () => {
  const d = dashboard(jobName()) as {
    uid: string;
    panels: {
      id: number;
      gridPos: { x: number; y: number; w: number; h: number };
      targets: { refId: string; expr: string; datasource: unknown }[];
    }[];
  };
  assert.equal(new Set(d.panels.map((p) => p.id)).size, d.panels.length);
  const cells = new Set<string>();
  for (const p of d.panels) {
    assert.ok(p.gridPos.x + p.gridPos.w <= 24);
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
        assert.ok(!cells.has(`${x},${y}`), `panel ${p.id} overlaps at ${x},${y}`);
        cells.add(`${x},${y}`);
      }
    assert.ok(p.targets.length > 0);
    for (const t of p.targets)
      assert.ok(t.expr.length > 0 && t.datasource !== undefined && /^[A-Z]$/.test(t.refId));
  }
  const cm = dashboardConfigMap() as {
    metadata: { labels: Record<string, string> };
    data: Record<string, string>;
  };
  assert.equal(cm.metadata.labels['grafana_dashboard'], '1');
  assert.deepEqual(JSON.parse(cm.data['aiops-operator.json'] ?? ''), d);
});

test('the bundle carries the metrics Service and the dashboard, no kind that needs prometheus-operator', () => {
  const kinds = bundleMonitoringObjects().map((o) => o['kind']);
  assert.deepEqual(kinds, ['Service', 'ConfigMap']);
  for (const [file, o] of [
    ['aiops-operator-metrics_v1_service.yaml', metricsService()],
    ['aiops-operator-dashboard_v1_configmap.yaml', dashboardConfigMap()],
  ] as const) {
    const path = join(ROOT, PATHS.manifests, file);
    assert.ok(existsSync(path), file);
    assert.deepEqual(fromYaml(readFileSync(path, 'utf8')), o);
  }
});
