// The operator's monitoring objects, one source for every install path: the metrics Service,
// the ServiceMonitor that scrapes it as it is secured, the PrometheusRule of alerts.ts and the
// Grafana dashboard of dashboard.ts in a ConfigMap for Grafana's sidecar. `npm run generate`
// writes them to deploy/aiops-monitoring.yaml (plain install) and the rule group alone to
// deploy/monitoring/aiops-rules.yaml (what promtool reads); the OLM bundle carries the Service
// and the dashboard (bundleMonitoringObjects); the Helm chart calls the same builders.

import { DEFAULT_INSTALL } from '../../api/install.ts';
import { METRICS_READER_ROLE } from '../../api/rbac.ts';
import { OPERATOR_LABELS, PORTS } from '../olm/deployment.ts';
import { ruleGroup } from './alerts.ts';
import { dashboard } from './dashboard.ts';

/** Name of the metrics Service; prometheus-operator names the scrape job after it, and the alerts select that job. */
export const METRICS_SERVICE = `${DEFAULT_INSTALL.deployment}-metrics`;

/** Labels on every monitoring object (the ServiceMonitor selects the Service by them). */
export const MONITORING_LABELS = {
  'app.kubernetes.io/part-of': 'aiops',
  'app.kubernetes.io/component': 'metrics',
} as const;

/** Where the monitoring objects go and what they are called. */
export interface MonitoringOptions {
  /** Namespace of the objects (the operator's); omitted from metadata when undefined (OLM sets it). */
  readonly namespace?: string;
  /** Name of the metrics Service and so of the scrape job (default METRICS_SERVICE). */
  readonly serviceName?: string;
  /** Extra labels on the PrometheusRule and ServiceMonitor, e.g. the `release` a Prometheus selects by. */
  readonly selectorLabels?: Readonly<Record<string, string>>;
}

function meta(
  name: string,
  o: MonitoringOptions,
  extra: Record<string, string> = {},
): Record<string, unknown> {
  return {
    name,
    ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
    labels: { ...MONITORING_LABELS, ...extra },
  };
}

/** The scrape job's name: the Service's (prometheus-operator's default `job` label). */
export function jobName(o: MonitoringOptions = {}): string {
  return o.serviceName ?? METRICS_SERVICE;
}

/**
 * The metrics Service: the operator pods' /metrics (HTTPS, port `https`, 8443, behind
 * TokenReview and SubjectAccessReview), which carries the hosted conversion webhook's
 * series too (the webhook port, open to anyone who reaches it, serves none).
 */
export function metricsService(o: MonitoringOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(jobName(o), o),
    spec: {
      selector: { ...OPERATOR_LABELS },
      ports: [{ name: 'https', port: PORTS.metrics, targetPort: 'https', protocol: 'TCP' }],
    },
  };
}

/**
 * The ServiceMonitor (prometheus-operator's monitoring.coreos.com/v1) scraping metricsService
 * every 30 s, as kubebuilder's scaffold does: over HTTPS with the Prometheus
 * ServiceAccount's token, which must be bound to the aiops-metrics-reader ClusterRole.
 *
 * TLS: the certificate is not verified (insecureSkipVerify). Without --metrics-cert-path the
 * operator serves /metrics with a certificate it signs itself at start, which no CA vouches
 * for, and Prometheus scrapes pods by IP, which no serving certificate names; the connection
 * is encrypted, and the token goes only to pod IPs the Service's endpoints list. With
 * --metrics-cert-path, replace it with `ca` and `serverName` of that certificate.
 */
export function serviceMonitor(o: MonitoringOptions = {}): Record<string, unknown> {
  const tlsConfig = { insecureSkipVerify: true };
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: meta(jobName(o), o, { ...o.selectorLabels }),
    spec: {
      selector: { matchLabels: { ...MONITORING_LABELS } },
      endpoints: [
        {
          port: 'https',
          scheme: 'https',
          path: '/metrics',
          interval: '30s',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          tlsConfig,
        },
      ],
    },
  };
}

/** The PrometheusRule (monitoring.coreos.com/v1) holding the rule group of alerts.ts. */
export function prometheusRule(o: MonitoringOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: meta(`${DEFAULT_INSTALL.deployment}-alerts`, o, { ...o.selectorLabels }),
    spec: { groups: [ruleGroup(jobName(o))] },
  };
}

/** Grafana's dashboard sidecar loads every ConfigMap with this label (kube-prometheus-stack's default). */
export const DASHBOARD_LABEL = { grafana_dashboard: '1' } as const;

/** The ConfigMap holding the dashboard JSON under `aiops-operator.json`, labelled for Grafana's sidecar. */
export function dashboardConfigMap(o: MonitoringOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(`${DEFAULT_INSTALL.deployment}-dashboard`, o, { ...DASHBOARD_LABEL }),
    data: { 'aiops-operator.json': `${JSON.stringify(dashboard(jobName(o)), null, 2)}\n` },
  };
}

/**
 * Every monitoring object, in the order `kubectl apply` creates them. The ServiceMonitor and
 * PrometheusRule need prometheus-operator's CRDs on the cluster.
 */
export function monitoringObjects(o: MonitoringOptions = {}): Record<string, unknown>[] {
  return [metricsService(o), serviceMonitor(o), prometheusRule(o), dashboardConfigMap(o)];
}

/**
 * What the OLM bundle carries: the metrics Service and the dashboard, core kinds only. OLM
 * fails a whole InstallPlan on an object whose kind the cluster does not serve, so a
 * ServiceMonitor or PrometheusRule in the bundle would make prometheus-operator a
 * prerequisite of every OLM install; OLM users apply those two from deploy/aiops-monitoring.yaml.
 */
export function bundleMonitoringObjects(): Record<string, unknown>[] {
  return [metricsService(), dashboardConfigMap()];
}

/** The rule file promtool reads: the PrometheusRule's groups alone. */
export function ruleFile(o: MonitoringOptions = {}): { groups: ReturnType<typeof ruleGroup>[] } {
  return { groups: [ruleGroup(jobName(o))] };
}

/** The ClusterRole the scraping Prometheus's ServiceAccount must be bound to (api/rbac.ts). */
export { METRICS_READER_ROLE };
