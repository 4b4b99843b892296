// The plain install (`kubectl apply -f deploy/aiops-operator.yaml`, no OLM): what OLM would
// create from the CSV, written out. The RBAC is api/rbac.ts, as in the CSV; the webhook's
// serving certificate is a Secret the operator creates, rotates and publishes as the CRD's
// caBundle, mounted where OLM would mount its own. The NetworkPolicies of network-policy.ts
// limit who reaches the pod's ports.

import { buildCRD } from '../../api/crd.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import {
  metricsReaderClusterRole,
  OPERATOR_CLUSTER_RULES,
  OPERATOR_NAMESPACE_RULES,
} from '../../api/rbac.ts';
import { operatorImage } from '../../api/releases.ts';
import { deploymentSpec, disruptionBudget, OPERATOR_LABELS, WEBHOOK_SERVICE_PORT } from './deployment.ts';
import { networkPolicies } from './network-policy.ts';

/** The Secret holding the webhook's self-signed serving certificate in a plain install. */
export const WEBHOOK_CERT_SECRET = DEFAULT_INSTALL.webhookCertSecret;

/** Every object of the plain install, in the order `kubectl apply` must create them. */
export function plainManifests(version: string): object[] {
  const ns = DEFAULT_INSTALL.namespace;
  const name = DEFAULT_INSTALL.deployment;
  const sa = DEFAULT_INSTALL.serviceAccount;
  const labels = { 'app.kubernetes.io/part-of': 'aiops' };
  const subjects = [{ kind: 'ServiceAccount', name: sa, namespace: ns }];
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'restricted' } },
    },
    buildCRD({
      conversion: {
        service: { namespace: ns, name: DEFAULT_INSTALL.webhookService, port: WEBHOOK_SERVICE_PORT },
      },
    }),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: OPERATOR_CLUSTER_RULES,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
    metricsReaderClusterRole(),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: ns, labels },
      rules: OPERATOR_NAMESPACE_RULES,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: ns, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: DEFAULT_INSTALL.webhookService, namespace: ns, labels },
      spec: {
        selector: { ...OPERATOR_LABELS },
        ports: [{ name: 'webhook', port: WEBHOOK_SERVICE_PORT, targetPort: 'webhook', protocol: 'TCP' }],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns, labels: { ...OPERATOR_LABELS } },
      spec: deploymentSpec({
        image: operatorImage(version),
        certVolume: { name: 'webhook-cert', volume: { emptyDir: {} }, writable: true },
        extraArgs: ['--self-signed-cert', `--webhook-secret=${WEBHOOK_CERT_SECRET}`],
      }),
    },
    disruptionBudget(ns),
    ...networkPolicies({ namespace: ns, labels }),
  ];
}
