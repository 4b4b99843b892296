// The Helm chart under deploy/helm/aiops-operator, checked with the real helm: it is what
// `npm run generate` writes, `helm lint --strict` passes, it refuses to install without
// prometheus.url or outside aiops-system, and rendered with its defaults it is the plain
// install object for object (RBAC rules, Service, Deployment with its PDB and spreading,
// NetworkPolicies, the CRD), so a change to one install path that misses the other fails here. Values land where
// they should, in both certificate modes. Nothing here needs a cluster.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { CHART_DIR, CERT_MANAGER, currentChartFiles, INJECT_CA_ANNOTATION } from '../../scripts/olm/helm.ts';
import { PROMETHEUS_URL_REQUIRED } from '../../scripts/olm/helm-values.ts';
import { OPERATOR_LABELS, PORTS } from '../../scripts/olm/deployment.ts';
import { METRICS_NAMESPACE_SELECTOR, NETWORK_POLICY_NAMES } from '../../scripts/olm/network-policy.ts';
import { RELEASES } from '../../api/releases.ts';
import { ROOT } from '../olm/validators.ts';
import { helm, objectsOf, renderChart, skipUnlessHelm, type K8sObject } from './helm.ts';

const CHART = join(ROOT, CHART_DIR);
/** Only ever written into rendered YAML, never dialled. */
const PROM = 'http://prometheus-operated.monitoring:9090';
const VERSION = RELEASES.at(-1)?.version ?? '';

interface EnvVar {
  name: string;
  value?: string;
}
interface DeploymentView {
  spec: {
    replicas: number;
    template: {
      spec: {
        containers: {
          image: string;
          imagePullPolicy: string;
          args: string[];
          env: EnvVar[];
          resources: unknown;
          volumeMounts: { readOnly?: boolean }[];
        }[];
        volumes: Record<string, unknown>[];
        nodeSelector?: unknown;
        tolerations?: unknown;
        affinity?: unknown;
        topologySpreadConstraints?: unknown;
      };
    };
  };
}

const key = (o: K8sObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const find = (objects: K8sObject[], kind: string, name?: string): K8sObject => {
  const o = objects.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(o, `rendered ${kind} ${name ?? ''}`);
  return o;
};
const deploymentOf = (
  objects: K8sObject[],
): DeploymentView['spec']['template']['spec'] & {
  replicas: number;
} => {
  const d = find(objects, 'Deployment') as unknown as DeploymentView;
  return { ...d.spec.template.spec, replicas: d.spec.replicas };
};
/** What a chart object and its plain twin must share: everything but metadata (labels differ by design). */
const body = (o: K8sObject): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'metadata'));
/** The Deployment without the Prometheus URL, which the plain install leaves to the user (as env or flag). */
const withoutPrometheusUrl = (o: K8sObject): Record<string, unknown> => {
  const d = structuredClone(o) as unknown as DeploymentView;
  for (const c of d.spec.template.spec.containers) {
    c.env = c.env.filter((e) => e.name !== 'AIOPS_PROMETHEUS_URL');
    c.args = c.args.filter((a) => !a.startsWith('--prometheus-url'));
  }
  return body(d as unknown as K8sObject);
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) =>
    statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)],
  );
}

describe('Helm chart deploy/helm/aiops-operator', { skip: skipUnlessHelm() }, () => {
  it('is exactly what npm run generate writes', () => {
    const want = currentChartFiles();
    const have = files(CHART).map((f) => relative(CHART, f));
    assert.deepEqual(have.sort(), [...want.keys()].sort());
    for (const [rel, content] of want) assert.equal(readFileSync(join(CHART, rel), 'utf8'), content, rel);
    assert.match(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'), new RegExp(`^version: ${VERSION}$`, 'm'));
  });

  it('passes helm lint --strict in both certificate modes', () => {
    for (const extra of [[], ['--set', 'certManager.enabled=true']]) {
      const r = helm([
        'lint',
        '--strict',
        CHART,
        '--namespace',
        'aiops-system',
        '--set',
        `prometheus.url=${PROM}`,
        ...extra,
      ]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('refuses to install without prometheus.url, saying what to set', () => {
    const r = helm(['template', 'aiops', CHART, '--namespace', 'aiops-system']);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(PROMETHEUS_URL_REQUIRED), r.stderr);
    // helm lint renders in its lint mode, where `required` only reports the missing value.
    const lint = helm(['lint', CHART, '--namespace', 'aiops-system']);
    assert.ok((lint.stdout + lint.stderr).includes(`Missing required value: ${PROMETHEUS_URL_REQUIRED}`));
  });

  it('refuses another namespace than aiops-system, where the CRD sends conversions', () => {
    const r = helm(['template', 'aiops', CHART, '--namespace', 'ops', '--set', `prometheus.url=${PROM}`]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /install this chart into namespace aiops-system/);
  });

  it('renders with its defaults the plain install, object for object: RBAC, Service, Deployment, PDB, CRD', () => {
    const plain = objectsOf(readFileSync(join(ROOT, 'deploy/aiops-operator.yaml'), 'utf8')).filter(
      (o) => o.kind !== 'Namespace',
    );
    const chart = renderChart(CHART, [`prometheus.url=${PROM}`], { includeCrds: true });
    assert.deepEqual(chart.map(key).sort(), plain.map(key).sort(), 'the same objects');
    for (const p of plain) {
      const c = chart.find((x) => key(x) === key(p));
      assert.ok(c);
      if (p.kind === 'Deployment') {
        assert.deepEqual(withoutPrometheusUrl(c), withoutPrometheusUrl(p), 'Deployment spec');
        const env = deploymentOf(chart).containers[0]?.env ?? [];
        assert.deepEqual(
          env.filter((e) => e.name === 'AIOPS_PROMETHEUS_URL'),
          [{ name: 'AIOPS_PROMETHEUS_URL', value: PROM }],
        );
      } else if (p.kind === 'CustomResourceDefinition') {
        assert.deepEqual(body(c), body(p), 'CRD spec');
        assert.deepEqual(c.metadata.annotations, {
          ...p.metadata.annotations,
          [INJECT_CA_ANNOTATION]: `aiops-system/${CERT_MANAGER.certificate}`,
        });
      } else {
        assert.deepEqual(body(c), body(p), key(p));
      }
      if (p.kind !== 'CustomResourceDefinition')
        assert.deepEqual(
          {
            chart: c.metadata.labels?.['helm.sh/chart'],
            by: c.metadata.labels?.['app.kubernetes.io/managed-by'],
            instance: c.metadata.labels?.['app.kubernetes.io/instance'],
            partOf: c.metadata.labels?.['app.kubernetes.io/part-of'],
          },
          { chart: `aiops-operator-${VERSION}`, by: 'Helm', instance: 'aiops', partOf: 'aiops' },
          `Helm's labels on ${key(p)}`,
        );
    }
  });

  it('puts each value where it belongs: replicas, image, resources, scheduling, PDB, LLM settings, other flags', () => {
    const objects = renderChart(CHART, [
      `prometheus.url=${PROM}`,
      'replicaCount=3',
      'image.repository=example.org/aiops',
      'image.tag=dev',
      'image.pullPolicy=Never',
      'resources.limits.memory=512Mi',
      'nodeSelector.pool=ops',
      'tolerations[0].key=dedicated,tolerations[0].operator=Exists',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=zone',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
      'podDisruptionBudget.minAvailable=2',
      'llm.endpointAllowlist={llm.example.com,http://vllm.ai.svc:8000/v1/}',
      'llm.defaultModel=qwen',
      'llm.callsPerHour=60',
      'settings.log-level=debug',
    ]);
    const pod = deploymentOf(objects);
    const [c] = pod.containers;
    assert.ok(c);
    assert.equal(pod.replicas, 3);
    assert.equal(c.image, 'example.org/aiops:dev');
    assert.equal(c.imagePullPolicy, 'Never');
    assert.deepEqual(c.resources, { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '512Mi' } });
    assert.deepEqual(pod.nodeSelector, { pool: 'ops' });
    assert.deepEqual(pod.tolerations, [{ key: 'dedicated', operator: 'Exists' }]);
    assert.ok(pod.affinity);
    assert.ok(pod.topologySpreadConstraints, 'spreading stays');
    assert.deepEqual(
      (find(objects, 'PodDisruptionBudget') as unknown as { spec: { minAvailable: number } }).spec
        .minAvailable,
      2,
    );
    const env = Object.fromEntries(c.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
    assert.deepEqual(env, {
      AIOPS_PROMETHEUS_URL: PROM,
      AIOPS_LLM_ENDPOINT_ALLOWLIST: 'llm.example.com,http://vllm.ai.svc:8000/v1/',
      AIOPS_LLM_DEFAULT_MODEL: 'qwen',
      AIOPS_LLM_CALLS_PER_HOUR: '60',
      AIOPS_LOG_LEVEL: 'debug',
    });
    const noPdb = renderChart(CHART, [`prometheus.url=${PROM}`, 'podDisruptionBudget.enabled=false']);
    assert.equal(noPdb.filter((o) => o.kind === 'PodDisruptionBudget').length, 0);
    const defaults = deploymentOf(renderChart(CHART, [`prometheus.url=${PROM}`]));
    assert.equal(defaults.containers[0]?.image, `registry.example.com/aiops/aiops-operator:v${VERSION}`);
    assert.equal(defaults.nodeSelector, undefined);
  });

  it('with certManager.enabled: an Issuer and a Certificate for the webhook Service, whose Secret the pods mount', () => {
    const objects = renderChart(CHART, [`prometheus.url=${PROM}`, 'certManager.enabled=true']);
    const cert = find(objects, 'Certificate') as unknown as {
      spec: { secretName: string; dnsNames: string[]; issuerRef: unknown };
    };
    assert.deepEqual(cert.spec.dnsNames, [
      'aiops-webhook-service.aiops-system.svc',
      'aiops-webhook-service.aiops-system.svc.cluster.local',
    ]);
    assert.deepEqual(cert.spec.issuerRef, { kind: 'Issuer', name: CERT_MANAGER.issuer });
    find(objects, 'Issuer', CERT_MANAGER.issuer);
    const pod = deploymentOf(objects);
    assert.ok(!pod.containers[0]?.args.includes('--self-signed-cert'), 'the operator issues nothing');
    assert.deepEqual(pod.volumes, [{ name: 'webhook-cert', secret: { secretName: cert.spec.secretName } }]);
    assert.equal(pod.containers[0]?.volumeMounts[0]?.readOnly, true);
    const own = renderChart(CHART, [
      `prometheus.url=${PROM}`,
      'certManager.enabled=true',
      'certManager.issuerRef.kind=ClusterIssuer',
      'certManager.issuerRef.name=corp-ca',
    ]);
    assert.equal(own.filter((o) => o.kind === 'Issuer').length, 0, 'no Issuer of its own');
    assert.deepEqual(
      (find(own, 'Certificate') as unknown as { spec: { issuerRef: unknown } }).spec.issuerRef,
      { kind: 'ClusterIssuer', name: 'corp-ca' },
    );
    const selfSigned = deploymentOf(renderChart(CHART, [`prometheus.url=${PROM}`]));
    assert.ok(selfSigned.containers[0]?.args.includes('--self-signed-cert'));
    assert.equal(
      renderChart(CHART, [`prometheus.url=${PROM}`]).filter((o) => o.kind === 'Certificate').length,
      0,
    );
  });

  it("networkPolicy: the plain install's policies by default, the metrics namespace selector a value, off when disabled", () => {
    type Policy = K8sObject & {
      spec: { podSelector: unknown; ingress?: { from?: unknown[]; ports: { port: number }[] }[] };
    };
    const policies = (set: readonly string[]): Policy[] =>
      renderChart(CHART, [`prometheus.url=${PROM}`, ...set]).filter(
        (o): o is Policy => o.kind === 'NetworkPolicy',
      );
    const byName = (ps: Policy[], name: string): Policy => {
      const p = ps.find((x) => x.metadata.name === name);
      assert.ok(p, name);
      return p;
    };
    const defaults = policies([]);
    assert.deepEqual(defaults.map((p) => p.metadata.name).sort(), Object.values(NETWORK_POLICY_NAMES).sort());
    for (const p of defaults) assert.deepEqual(p.spec.podSelector, { matchLabels: OPERATOR_LABELS });
    assert.equal(
      byName(defaults, NETWORK_POLICY_NAMES.denyIngress).spec.ingress,
      undefined,
      'no rule at all',
    );
    assert.deepEqual(byName(defaults, NETWORK_POLICY_NAMES.webhook).spec.ingress, [
      { ports: [{ port: PORTS.webhook, protocol: 'TCP' }] },
    ]);
    assert.deepEqual(byName(defaults, NETWORK_POLICY_NAMES.metrics).spec.ingress, [
      {
        from: [{ namespaceSelector: METRICS_NAMESPACE_SELECTOR }],
        ports: [{ port: PORTS.metrics, protocol: 'TCP' }],
      },
    ]);
    const custom = policies([
      'networkPolicy.metricsNamespaceSelector.matchLabels.metrics=null',
      'networkPolicy.metricsNamespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
    ]);
    assert.deepEqual(byName(custom, NETWORK_POLICY_NAMES.metrics).spec.ingress?.[0]?.from, [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    assert.deepEqual(policies(['networkPolicy.enabled=false']), []);
  });

  it('with monitoring.enabled: the objects of deploy/aiops-monitoring.yaml, alert templates printed as written', () => {
    const plain = objectsOf(readFileSync(join(ROOT, 'deploy/aiops-monitoring.yaml'), 'utf8'));
    const off = renderChart(CHART, [`prometheus.url=${PROM}`]);
    assert.equal(off.filter((o) => o.kind === 'ServiceMonitor').length, 0, 'off by default');
    const on = renderChart(CHART, [
      `prometheus.url=${PROM}`,
      'monitoring.enabled=true',
      'monitoring.labels.release=kube-prometheus-stack',
    ]);
    for (const p of plain) {
      const c = on.find((x) => key(x) === key(p));
      assert.ok(c, `rendered ${key(p)}`);
      assert.deepEqual(body(c), body(p), key(p));
    }
    for (const kind of ['ServiceMonitor', 'PrometheusRule'])
      assert.equal(find(on, kind).metadata.labels?.['release'], 'kube-prometheus-stack', kind);
    const r = helm([
      'lint',
      '--strict',
      CHART,
      '--namespace',
      'aiops-system',
      '--set',
      `prometheus.url=${PROM}`,
      '--set',
      'monitoring.enabled=true',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
