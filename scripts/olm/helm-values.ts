// The Helm chart's values.yaml: every setting a user may change, each with its comment, and
// defaults taken from the objects the plain install ships (deploymentSpec's replicas,
// resources and spreading, the PodDisruptionBudget), so the chart rendered with its
// defaults is the plain install.

import { OPERATOR_IMAGE_REPOSITORY } from '../../api/releases.ts';
import { toYaml } from '../../lib/yaml.ts';
import { deploymentSpec, disruptionBudget, LLM_SECRET, PORTS } from './deployment.ts';
import { METRICS_NAMESPACE_SELECTOR } from './network-policy.ts';
import { TARGET_KINDS_COMMENT } from './target-kinds.ts';

/** What the plain install's pod spec says about replicas, resources and spreading. */
interface PlainDefaults {
  replicas: number;
  template: {
    spec: {
      topologySpreadConstraints: unknown[];
      containers: { resources: unknown; imagePullPolicy: string }[];
    };
  };
}

/** The plain install's Deployment defaults the chart starts from. */
export function plainDefaults(): {
  replicas: number;
  resources: unknown;
  pullPolicy: string;
  spread: unknown[];
  minAvailable: unknown;
} {
  const spec = deploymentSpec({ image: 'unused' }) as unknown as PlainDefaults;
  const container = spec.template.spec.containers[0];
  if (container === undefined) throw new Error('the operator Deployment has no container');
  const pdb = disruptionBudget() as { spec: { minAvailable: unknown } };
  return {
    replicas: spec.replicas,
    resources: container.resources,
    pullPolicy: container.imagePullPolicy,
    spread: spec.template.spec.topologySpreadConstraints,
    minAvailable: pdb.spec.minAvailable,
  };
}

/** One top-level key of values.yaml with the comment above it. */
interface Section {
  readonly comment: string;
  readonly key: string;
  readonly value: unknown;
}

/** The message `helm install` fails with when prometheus.url is not set. */
export const PROMETHEUS_URL_REQUIRED =
  "set prometheus.url to your Prometheus' base URL, e.g. http://prometheus-operated.monitoring:9090";

/** The sections of values.yaml, in order. */
export function valueSections(): Section[] {
  const d = plainDefaults();
  return [
    {
      comment: `REQUIRED. Where the operator queries every AITask's trigger (env AIOPS_PROMETHEUS_URL, flag
--prometheus-url). \`helm install\` fails without it: ${PROMETHEUS_URL_REQUIRED}.`,
      key: 'prometheus',
      value: { url: '' },
    },
    {
      comment: `The operator image; tag defaults to v<appVersion>.`,
      key: 'image',
      value: { repository: OPERATOR_IMAGE_REPOSITORY, tag: '', pullPolicy: d.pullPolicy },
    },
    {
      comment: `Replicas: one leader reconciles, every replica serves the CRD's conversion webhook.`,
      key: 'replicaCount',
      value: d.replicas,
    },
    { comment: 'Resources of the operator container.', key: 'resources', value: d.resources },
    {
      comment: 'Spreading of the replicas, so one node drained or lost leaves a webhook serving conversions.',
      key: 'topologySpreadConstraints',
      value: d.spread,
    },
    {
      comment: 'The PodDisruptionBudget: a drain takes at most one replica at a time.',
      key: 'podDisruptionBudget',
      value: { enabled: true, minAvailable: d.minAvailable },
    },
    { comment: TARGET_KINDS_COMMENT, key: 'targetKinds', value: [] },
    { comment: 'Scheduling of the operator pods.', key: 'nodeSelector', value: {} },
    { comment: '', key: 'tolerations', value: [] },
    { comment: '', key: 'affinity', value: {} },
    {
      comment: `LLM mode (docs/operator.md): each setting, when set, becomes the operator's AIOPS_LLM_* env.
The API key is read from the optional Secret "${LLM_SECRET}" (key api-key) in the release namespace.`,
      key: 'llm',
      value: {
        endpointAllowlist: [],
        defaultModel: '',
        maxCompletionTokens: '',
        temperature: '',
        callsPerHour: '',
        taskCallsPerHour: '',
        namespaceCallsPerHour: '',
        failureThreshold: '',
        circuitCooloff: '',
        maxTimeout: '',
      },
    },
    {
      comment: `Any other operator flag by its name without the leading dashes, e.g. {log-level: debug, max-concurrent-reconciles: 8};
each becomes env AIOPS_<NAME> (docs/operator.md lists them).`,
      key: 'settings',
      value: {},
    },
    {
      comment: `The webhook's serving certificate. Default: the operator issues and renews a self-signed one in
Secret aiops-webhook-service-cert and writes its CA into the CRD, as the plain install does.
enabled: a cert-manager Certificate instead (a self-signed Issuer unless issuerRef names one);
cert-manager's cainjector writes the CA into the CRD, whose annotation the chart's crds/ carries.`,
      key: 'certManager',
      value: { enabled: false, issuerRef: {} },
    },
    {
      comment: `The metrics Service, ServiceMonitor, PrometheusRule and Grafana dashboard ConfigMap (label grafana_dashboard: "1")
of deploy/aiops-monitoring.yaml; needs prometheus-operator's CRDs. labels: added to each, e.g. {release: kube-prometheus-stack}
for a Prometheus that selects by it. Bind the scraping Prometheus' ServiceAccount to the aiops-metrics-reader ClusterRole.`,
      key: 'monitoring',
      value: { enabled: false, labels: {} },
    },
    {
      comment: `NetworkPolicies on the operator pods: every ingress denied but the webhook port (${PORTS.webhook}) from any
source (the kube-apiserver is no pod a selector can name) and the metrics port (${PORTS.metrics}) from pods in the
namespaces metricsNamespaceSelector selects (kubebuilder's label metrics: enabled; label your Prometheus'
namespace with it, or select it otherwise). The kubelet's probes come from the pod's own node, which a
NetworkPolicy always allows. Enforced only by a CNI that implements NetworkPolicy (docs/install.md).`,
      key: 'networkPolicy',
      value: { enabled: true, metricsNamespaceSelector: METRICS_NAMESPACE_SELECTOR },
    },
  ];
}

/** The settings of `llm` in values.yaml and the flag each sets. */
export const LLM_VALUE_FLAGS: Readonly<Record<string, string>> = {
  endpointAllowlist: 'llm-endpoint-allowlist',
  defaultModel: 'llm-default-model',
  maxCompletionTokens: 'llm-max-completion-tokens',
  temperature: 'llm-temperature',
  callsPerHour: 'llm-calls-per-hour',
  taskCallsPerHour: 'llm-task-calls-per-hour',
  namespaceCallsPerHour: 'llm-namespace-calls-per-hour',
  failureThreshold: 'llm-failure-threshold',
  circuitCooloff: 'llm-circuit-cooloff',
  maxTimeout: 'llm-max-timeout',
};

/** values.yaml: each section's comment as `#` lines, then its YAML. */
export function valuesYaml(header: string): string {
  return (
    header +
    valueSections()
      .map(
        (s) =>
          (s.comment === ''
            ? ''
            : s.comment
                .split('\n')
                .map((l) => `# ${l}\n`)
                .join('')) + toYaml({ [s.key]: s.value }),
      )
      .join('\n')
  );
}
