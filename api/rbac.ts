// The operator's RBAC, stated once: the OLM bundle's CSV (permissions/clusterPermissions)
// and the plain install manifests (Role/ClusterRole) are both generated from these lists, so
// the two install paths grant exactly the same access. Each rule names the operator call
// that needs it; a call the operator makes without a rule here fails with
// Forbidden in the install test, which runs the operator with exactly these rules.

import { DEFAULT_INSTALL } from './install.ts';
import { LEADER_LEASE_NAME } from '../lib/lease-liveness.ts';
import { CRD_NAME, GROUP, PLURAL } from './schema/common.ts';

/** A Kubernetes rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/**
 * Cluster-wide rules (a ClusterRole; `clusterPermissions` in the CSV). The operator is
 * installed for all namespaces, so everything it reads or acts on in users' namespaces is
 * granted here.
 */
export const OPERATOR_CLUSTER_RULES: readonly PolicyRule[] = [
  /**
   * The AITask informer (list/watch), a fresh read before settling an interrupted decision,
   * the sweep of cordon marks confirming an orphan (list) and dropping a stale node from a
   * status (get), finalizer merge patches and removing a consumed approval annotation; `update` only for
   * `--migrate-storage-on-start`, which rewrites each AITask (a PUT of the object as read)
   * so etcd holds it at the storage version.
   */
  { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
  /** Status writes (reconcile, the sweep of cordon marks): PUT of the status subresource, bound to the resourceVersion. */
  { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['update'] },
  /** The target informers, one per target kind (Deployments, StatefulSets). */
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['list', 'watch'] },
  /** ScaleUp/ScaleDown: read the target's scale subresource, then PUT it bound to its resourceVersion. */
  { apiGroups: ['apps'], resources: ['deployments/scale', 'statefulsets/scale'], verbs: ['get', 'update'] },
  /** Bounded spec history: create one owned ControllerRevision per generation, list and prune. */
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['list', 'create', 'delete'] },
  /**
   * RestartPod, CordonNode and the check of an interrupted RestartPod list the target's pods
   * (narrowed by its selector, paginated); only those it controls (a StatefulSet) or its
   * ReplicaSets control (a Deployment) are acted on.
   */
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  /**
   * The same calls list the target's ReplicaSets: a pod is the Deployment's only when its
   * controller is a ReplicaSet whose controller is the Deployment (ownerReferences by UID).
   */
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['list'] },
  /** RestartPod evicts through the Eviction API, which honours PodDisruptionBudgets. */
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  /**
   * CordonNode, the finalizer's uncordon and the sweep of stale cordon marks patch
   * `spec.unschedulable` and the mark; the cordon caps and the sweep list the nodes; the
   * uncordon, the check of an interrupted cordon and each release of a mark GET one node.
   */
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'patch'] },
  /**
   * An Event (events.k8s.io/v1) for every decision, action and guardrail refusal; the LLM
   * advisor lists the target namespace's Events for their reasons (never their notes).
   */
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'list'] },
  /**
   * `--metrics-secure` (the default): who may read /metrics is asked of the cluster, a
   * TokenReview for the scraper's bearer token and a SubjectAccessReview for its user
   * (operator/runtime/metrics-auth.ts), as controller-runtime's metrics filter does.
   */
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  /**
   * For the conversion webhook hosted in the operator process (the controller makes no such
   * call). The AITask CRD only: read its conversion and storedVersions, and patch the
   * conversion webhook's caBundle when the operator manages its own serving certificate
   * (plain install; OLM injects the caBundle itself).
   */
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: ['get', 'patch'],
    resourceNames: [CRD_NAME],
  },
  /**
   * `--migrate-storage-on-start`: once every AITask is at the storage version, trim the AITask
   * CRD's `status.storedVersions` to it (a PUT of the status subresource).
   */
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions/status'],
    verbs: ['update'],
    resourceNames: [CRD_NAME],
  },
];

/**
 * Rules in the operator's own namespace (a Role; `permissions` in the CSV): leader election,
 * the webhook serving certificate and the conversion stash key never need access anywhere else.
 */
export const OPERATOR_NAMESPACE_RULES: readonly PolicyRule[] = [
  /**
   * Leader election on a coordination.k8s.io Lease: read and renew/release (PUT) only the
   * operator's own Lease (`--leader-election-id`, default LEADER_LEASE_NAME). Under OLM this Role
   * lands in a namespace shared with other operators (`operators`): without `resourceNames` it
   * would let the operator read and take over their leader Leases too.
   */
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    resourceNames: [LEADER_LEASE_NAME],
    verbs: ['get', 'update'],
  },
  /**
   * Creating the Lease when absent. RBAC cannot bind `create` to a name (the name is not part
   * of the request URL, so `resourceNames` would refuse every create), hence unrestricted, as
   * kubebuilder's scaffold grants it; creating a Lease takes over no one's existing one.
   */
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  /**
   * The self-signed webhook certificate (`--self-signed-cert`, plain install;
   * conversion-webhook/cert-rotation.ts) and, in the same Secret, the conversion stash key
   * (conversion-webhook/hosted/conversion-key.ts): created once when absent, so `create`, which cannot be bound to a
   * name either; then read, renewed and given the key by name only. One name for both keeps
   * the key readable under every release's role, the ones before the key included.
   */
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
  {
    apiGroups: [''],
    resources: ['secrets'],
    resourceNames: [DEFAULT_INSTALL.webhookCertSecret],
    verbs: ['get', 'update'],
  },
];

/** A rule on non-resource URLs (a ClusterRole only). */
export interface NonResourceRule {
  readonly nonResourceURLs: readonly string[];
  readonly verbs: readonly string[];
}

/** The ClusterRole a scraper (Prometheus' ServiceAccount) is bound to, to read the operator's /metrics. */
export const METRICS_READER_ROLE = 'aiops-metrics-reader';

/** What METRICS_READER_ROLE grants: GET of /metrics, the one thing the operator's metrics filter asks about. */
export const METRICS_READER_RULES: readonly NonResourceRule[] = [
  { nonResourceURLs: ['/metrics'], verbs: ['get'] },
];

/**
 * The METRICS_READER_ROLE ClusterRole, as both install paths ship it (deploy/ and the OLM
 * bundle's manifests); a monitoring stack binds its scraper's ServiceAccount to it.
 */
export function metricsReaderClusterRole(): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: METRICS_READER_ROLE, labels: { 'app.kubernetes.io/part-of': 'aiops' } },
    rules: METRICS_READER_RULES,
  };
}
