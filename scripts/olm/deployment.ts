// The operator's Deployment, shared by the CSV's install strategy and the plain install
// manifests so that both run the same pod: image, flags, ports, probes, resources and a
// restricted security context (non-root, read-only root filesystem, no capabilities).

import { DEFAULT_INSTALL } from '../../api/install.ts';
import { LLM_API_KEY_ENV } from '../../operator/flags.ts';

/** Labels on the operator's pods; the Deployment selector and the webhook Service use them. */
export const OPERATOR_LABELS = {
  'app.kubernetes.io/name': 'aiops-operator',
  'app.kubernetes.io/part-of': 'aiops',
};

/** Ports the operator listens on inside the pod: /metrics over HTTPS on 8443, as kubebuilder's scaffold. */
export const PORTS = { webhook: DEFAULT_INSTALL.webhookPort, metrics: 8443, health: 8081 } as const;

/** Port of the webhook Service (what the CRD's conversion config and OLM's `containerPort` name). */
export const WEBHOOK_SERVICE_PORT = 443;

/** The operator container's memory limit, in MiB (its request is 96 MiB). */
export const OPERATOR_MEMORY_LIMIT_MIB = 384;

/** Optional Secret in the install namespace whose `api-key` is sent to LLM endpoints (LLM mode). */
export const LLM_SECRET = 'aiops-llm';
/** Env var the operator reads the LLM API key from (its default; mapped from LLM_SECRET). */
export { LLM_API_KEY_ENV };

/** Where the webhook reads `tls.crt`/`tls.key`: the path OLM mounts its serving certificate at. */
export const WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/**
 * Flags every install passes to the operator (see `npm run operator -- --help`). The Lease
 * lives in the install namespace, which OLM chooses, so it comes from the downward API. No
 * LLM setting is forced: LLM mode is turned on through the environment (AIOPS_LLM_*), which
 * an OLM Subscription's `spec.config.env` can set, and without a key no Authorization is sent.
 */
export const OPERATOR_ARGS = [
  '--leader-elect',
  '--leader-election-namespace=$(POD_NAMESPACE)',
  `--metrics-port=${PORTS.metrics}`,
  `--health-port=${PORTS.health}`,
  `--webhook-port=${PORTS.webhook}`,
  `--webhook-cert-dir=${WEBHOOK_CERT_DIR}`,
];

export interface DeploymentOptions {
  /** Operator image reference. */
  readonly image: string;
  /** Flags after OPERATOR_ARGS (default none). */
  readonly extraArgs?: readonly string[];
  /** Volumes and their mounts in the operator container (default none: OLM adds the certificate's). */
  readonly certVolume?: {
    readonly name: string;
    readonly volume: Record<string, unknown>;
    /** Mounted read-write (the operator writes its own certificate there); default read-only. */
    readonly writable?: boolean;
  };
}

/**
 * The `spec` of the operator Deployment: 2 replicas so the conversion webhook stays up
 * through a rollout (one leader reconciles, both serve conversions).
 */
export function deploymentSpec(options: DeploymentOptions): Record<string, unknown> {
  const probe = (path: string): Record<string, unknown> => ({
    httpGet: { path, port: 'health' },
    periodSeconds: 10,
    timeoutSeconds: 2,
  });
  const cert = options.certVolume;
  return {
    replicas: 2,
    selector: { matchLabels: { ...OPERATOR_LABELS } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    template: {
      metadata: {
        labels: { ...OPERATOR_LABELS },
        annotations: { 'kubectl.kubernetes.io/default-container': 'operator' },
      },
      spec: {
        serviceAccountName: DEFAULT_INSTALL.serviceAccount,
        // One replica per node where the cluster allows it, so one node drained or lost leaves
        // a webhook serving conversions; a one-node cluster still runs both.
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'kubernetes.io/hostname',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: { ...OPERATOR_LABELS } },
          },
        ],
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        terminationGracePeriodSeconds: 30,
        containers: [
          {
            name: 'operator',
            image: options.image,
            imagePullPolicy: 'IfNotPresent',
            args: [...OPERATOR_ARGS, ...(options.extraArgs ?? [])],
            env: [
              { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              {
                name: LLM_API_KEY_ENV,
                valueFrom: { secretKeyRef: { name: LLM_SECRET, key: 'api-key', optional: true } },
              },
            ],
            ports: [
              { name: 'webhook', containerPort: PORTS.webhook, protocol: 'TCP' },
              { name: 'https', containerPort: PORTS.metrics, protocol: 'TCP' },
              { name: 'health', containerPort: PORTS.health, protocol: 'TCP' },
            ],
            livenessProbe: { ...probe('/healthz'), initialDelaySeconds: 15 },
            readinessProbe: { ...probe('/readyz'), initialDelaySeconds: 5 },
            resources: {
              requests: { cpu: '50m', memory: '96Mi' },
              limits: { memory: `${OPERATOR_MEMORY_LIMIT_MIB}Mi` },
            },
            securityContext: {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'] },
            },
            ...(cert
              ? {
                  volumeMounts: [
                    { name: cert.name, mountPath: WEBHOOK_CERT_DIR, readOnly: cert.writable !== true },
                  ],
                }
              : {}),
          },
        ],
        ...(cert ? { volumes: [{ name: cert.name, ...cert.volume }] } : {}),
      },
    },
  };
}

/**
 * The PodDisruptionBudget both install paths ship: of the two replicas, a drain may take one
 * at a time, so a voluntary disruption (node drain, cluster upgrade) never leaves the
 * conversion webhook without a pod, and every v1/v1alpha1 read keeps answering.
 */
export function disruptionBudget(namespace?: string): Record<string, unknown> {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: DEFAULT_INSTALL.deployment,
      ...(namespace !== undefined ? { namespace } : {}),
      labels: { 'app.kubernetes.io/part-of': 'aiops' },
    },
    spec: { minAvailable: 1, selector: { matchLabels: { ...OPERATOR_LABELS } } },
  };
}
