// The kinds an AITask may target (v2.TargetKind) and what differs between them, in one table:
// the resource the target cache watches and whose /scale subresource an action writes, the
// cache's page and byte budgets, the controller chain from a pod up to the target (ownership
// is by controller references and UIDs, never labels), and which of the target's pods a
// RestartPod or CordonNode takes first. A new kind enters here, in the default query's pod
// names (decision/metric-query.ts) and in the input-path inventory.

import type { TargetKind } from '../../api/schema/v2.ts';
import type { ResourceType } from '../../lib/kube/resources.ts';
import type { Workload } from './kinds.ts';
import { Resources } from '../../lib/kube/coordinates.ts';

/** Which of a target's pods an action takes first (edges/pod-choice.ts). */
export type PodOrder =
  /** Not ready before ready, then most restarts, then oldest: the pod in the worst shape. */
  | 'worst'
  /** The highest ordinal (`NAME-N`): the pod a StatefulSet itself would remove first. */
  | 'highestOrdinal';

/** What the operator does differently for one target kind. */
export interface TargetKindRules {
  readonly kind: TargetKind;
  /** The resource the target cache lists and watches, and whose `scale` subresource is written. */
  readonly resource: ResourceType;
  /**
   * Kind of the controller between a pod and the target (a Deployment's ReplicaSet), or
   * undefined when the target is its pods' controller itself (a StatefulSet).
   */
  readonly via?: 'ReplicaSet';
  readonly podOrder: PodOrder;
  /**
   * Most JSON one page of the cache's LIST may carry, in bytes: the page is parsed whole
   * before the transform drops a pod template as large as etcd stores (pageSizeFor gives
   * the objects per page).
   */
  readonly pageBytes: number;
  /** Bytes of trimmed objects (JSON) the cache holds in all. */
  readonly cacheBytes: number;
  /** Bytes of trimmed objects (JSON) of one namespace the cache holds: one tenant cannot fill it alone. */
  readonly namespaceCacheBytes: number;
}

const MIB = 1024 * 1024;

/**
 * Every target kind's rules.
 * - Deployment: pages of 16 MiB (10 objects of etcd's largest); 32 MiB of trimmed Deployments
 *   in all (a trimmed one is a few hundred bytes: ~60,000 real ones, over 6,000 at the
 *   selector bound), 4 MiB per namespace (an eighth).
 * - StatefulSet: pages of 8 MiB (5 objects), so its first list beside the AITask's and the
 *   Deployments' adds half a page to the peak; 8 MiB in all (~15,000 real ones), 1 MiB per
 *   namespace (an eighth). Clusters run far fewer StatefulSets than Deployments.
 */
export const TARGET_KINDS: Readonly<Record<TargetKind, TargetKindRules>> = {
  Deployment: {
    kind: 'Deployment',
    resource: Resources.deployments,
    via: 'ReplicaSet',
    podOrder: 'worst',
    pageBytes: 16 * MIB,
    cacheBytes: 32 * MIB,
    namespaceCacheBytes: 4 * MIB,
  },
  StatefulSet: {
    kind: 'StatefulSet',
    resource: Resources.statefulsets,
    podOrder: 'highestOrdinal',
    pageBytes: 8 * MIB,
    cacheBytes: 8 * MIB,
    namespaceCacheBytes: 1 * MIB,
  },
};

/** A record of `f` applied to every target kind. */
export function perKind<T>(f: (kind: TargetKind) => T): Record<TargetKind, T> {
  return { Deployment: f('Deployment'), StatefulSet: f('StatefulSet') };
}

/**
 * The rules of `target`'s kind, which its cache's transform set (trim.ts trimWorkload).
 * Throws on a workload without its kind: acting on it as another kind could scale a
 * different object of the same name.
 */
export function rulesOf(target: Workload): TargetKindRules {
  if (target.kind === undefined)
    throw new Error(
      `the target ${target.metadata.namespace ?? ''}/${target.metadata.name ?? ''} does not say its kind`,
    );
  return TARGET_KINDS[target.kind];
}
