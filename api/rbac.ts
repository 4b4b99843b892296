// The operator's RBAC, stated once: the OLM bundle's CSV (permissions/clusterPermissions)
// and the plain install manifests (Role/ClusterRole) are both generated from these lists, so
// the two install paths grant exactly the same access. Each rule names the operator call
// that needs it (DESIGN §4); a call the operator makes without a rule here fails with
// Forbidden in the install test, which runs the operator with exactly these rules.

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
  /** The AITask informer (list/watch), and finalizer add/remove through update/patch. */
  { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  /** Status writes through the status subresource. */
  { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['get', 'update', 'patch'] },
  /** Setting finalizers on an AITask owned by the operator's controller. */
  { apiGroups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ['update'] },
  /** Targets: reading the watched Deployments. */
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
  /** ScaleUp/ScaleDown go through the scale subresource only. */
  { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'update', 'patch'] },
  /** Finding a Deployment's pods through its current ReplicaSet. */
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get', 'list'] },
  /** Bounded spec history: one owned ControllerRevision per observed generation. */
  {
    apiGroups: ['apps'],
    resources: ['controllerrevisions'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
  },
  /** Pod health of the target, and the node of the worst pod for CordonNode. */
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
  /** RestartPod evicts through the Eviction API, which honours PodDisruptionBudgets. */
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  /** CordonNode and the finalizer's uncordon patch `spec.unschedulable`. */
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
  /** An Event for every decision, action and guardrail refusal. */
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  /**
   * The AITask CRD only: read its conversion and storedVersions, and patch the
   * conversion webhook's caBundle when the operator manages its own serving certificate
   * (plain install; OLM injects the caBundle itself).
   */
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: ['get', 'patch'],
    resourceNames: [CRD_NAME],
  },
];

/**
 * Rules in the operator's own namespace (a Role; `permissions` in the CSV): leader election
 * and the webhook serving certificate never need access anywhere else.
 */
export const OPERATOR_NAMESPACE_RULES: readonly PolicyRule[] = [
  /** Leader election on a coordination.k8s.io Lease. */
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  /** The webhook serving certificate Secret. */
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
];
