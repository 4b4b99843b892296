// The NetworkPolicies every install path ships (plain manifests, Helm chart, OLM bundle), so
// that nothing on the pod network reaches the operator's ports but the peers each port
// serves. They follow kubebuilder's config/network-policy scaffold (one policy per allowed
// peer, its names and its `metrics: enabled` namespace label) and add what the scaffold leaves
// implicit: a policy that denies every other ingress, and a webhook policy open to every
// source, because the kube-apiserver is not a pod a selector can name.

import { toYaml } from '../../lib/yaml.ts';
import { OPERATOR_LABELS, PORTS } from './deployment.ts';

/**
 * The namespace label whose namespaces may scrape /metrics (port 8443): kubebuilder's
 * `metrics: enabled`. The admin labels the monitoring namespace with it
 * (`kubectl label namespace monitoring metrics=enabled`); the Helm chart's
 * `networkPolicy.metricsNamespaceSelector` replaces it.
 */
export const METRICS_NAMESPACE_SELECTOR = { matchLabels: { metrics: 'enabled' } } as const;

/**
 * The policies alone, without a namespace: what an OLM admin applies into the install namespace
 * when a catalog refuses them in bundles (`kubectl -n <ns> apply -f`).
 */
export const NETWORK_POLICIES_FILE = 'deploy/aiops-network-policies.yaml';

/** Names of the shipped policies. */
export const NETWORK_POLICY_NAMES = {
  /** Selects the operator pods for ingress with no rule: every ingress the others do not allow is denied. */
  denyIngress: 'aiops-deny-ingress',
  /** The webhook port (9443) from any source: the kube-apiserver's conversion calls. */
  webhook: 'aiops-allow-webhook-traffic',
  /** The metrics port (8443) from pods of namespaces matching the metrics namespace selector. */
  metrics: 'aiops-allow-metrics-traffic',
} as const;

/** Why each policy is as it is; written as a YAML comment above it in every install path. */
export const NETWORK_POLICY_COMMENTS: Readonly<Record<string, string>> = {
  [NETWORK_POLICY_NAMES.denyIngress]: `Denies every ingress to the operator pods that another policy does not allow. The health port
(${PORTS.health}: /healthz, /readyz) has no allow rule: the kubelet probes from the pod's own node, and
traffic from that node is always allowed whatever the policies say (Kubernetes' NetworkPolicy
semantics; a policy cannot select the kubelet). A CNI configured to subject host traffic to
policy (Cilium's allow-localhost: policy) needs its own rule for the host; see docs/install.md.`,
  [NETWORK_POLICY_NAMES.webhook]: `The conversion webhook port (${PORTS.webhook}) from any source. Its caller is the kube-apiserver,
which is not a pod: it runs on a node's host network or outside the cluster (a managed control
plane, a konnectivity proxy), so no pod or namespace selector matches it, and kubebuilder's
\`webhook: enabled\` namespace selector would cut every conversion off. The webhook bounds
and budgets what strangers send it instead.`,
  [NETWORK_POLICY_NAMES.metrics]: `The metrics port (${PORTS.metrics}) from pods in namespaces labelled as kubebuilder's scaffold does
(\`metrics: enabled\`): label the namespace of the Prometheus that scrapes the operator with it.`,
};

/** What `networkPolicies` builds. */
export interface NetworkPolicyOptions {
  /** Namespace of the policies; default none (the OLM bundle: OLM sets the install namespace). */
  readonly namespace?: string;
  /** Labels on each policy; default `app.kubernetes.io/part-of: aiops`. */
  readonly labels?: Readonly<Record<string, unknown>>;
  /**
   * The `from` peer of the metrics policy; default `{ namespaceSelector: METRICS_NAMESPACE_SELECTOR }`.
   * The Helm chart puts its value's template here.
   */
  readonly metricsPeer?: Readonly<Record<string, unknown>>;
}

/**
 * The operator's ingress policies, all selecting the operator pods (OPERATOR_LABELS): deny
 * all, webhook from anywhere, metrics from the monitoring namespaces. Egress is not
 * restricted (the operator calls the apiserver, Prometheus and LLM endpoints the admin
 * configures).
 */
export function networkPolicies(options: NetworkPolicyOptions = {}): Record<string, unknown>[] {
  const labels = options.labels ?? { 'app.kubernetes.io/part-of': 'aiops' };
  const policy = (name: string, ingress: readonly unknown[]): Record<string, unknown> => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name,
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      labels,
    },
    spec: {
      podSelector: { matchLabels: { ...OPERATOR_LABELS } },
      policyTypes: ['Ingress'],
      // No rule is written as no `ingress` key, as the apiserver stores it.
      ...(ingress.length > 0 ? { ingress } : {}),
    },
  });
  const port = (n: number): { port: number; protocol: string } => ({ port: n, protocol: 'TCP' });
  return [
    policy(NETWORK_POLICY_NAMES.denyIngress, []),
    policy(NETWORK_POLICY_NAMES.webhook, [{ ports: [port(PORTS.webhook)] }]),
    policy(NETWORK_POLICY_NAMES.metrics, [
      {
        from: [options.metricsPeer ?? { namespaceSelector: METRICS_NAMESPACE_SELECTOR }],
        ports: [port(PORTS.metrics)],
      },
    ]),
  ];
}

/** `# ` lines of the comment of `o` when it is one of the shipped policies, else ''. */
export function policyComment(o: unknown): string {
  const name =
    typeof o === 'object' && o !== null && (o as { kind?: unknown }).kind === 'NetworkPolicy'
      ? (o as { metadata?: { name?: unknown } }).metadata?.name
      : undefined;
  const comment = typeof name === 'string' ? NETWORK_POLICY_COMMENTS[name] : undefined;
  return comment === undefined
    ? ''
    : comment
        .split('\n')
        .map((l) => `# ${l}\n`)
        .join('');
}

/** `o` as YAML, after its policy comment (policyComment) when it has one. */
export function commentedYaml(o: unknown): string {
  return policyComment(o) + toYaml(o);
}
