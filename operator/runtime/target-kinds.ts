// The kinds an AITask may target and what differs between them. The cached kinds
// (v2.TargetKind) are one table: the resource the target cache watches and whose /scale
// subresource an action writes, the cache's page budget and share of the memory ledger, the controller chain from
// a pod up to the target (ownership is by controller references and UIDs, never labels), and
// which of the target's pods a RestartPod or CordonNode takes first. Any other kind is read
// through /scale (scale-targets.ts) with the resource discovery found, and its pods are the
// ones whose owner chain leads to it (edges/owner-chain.ts). A new cached kind enters here,
// in the default query's pod names (decision/metric-query.ts) and in the input-path inventory.

import { TARGET_KINDS as KINDS, type TargetKind } from '../../api/schema/v2.ts';
import type { ResourceType } from '../../lib/kube/resources.ts';
import type { Workload } from './kinds.ts';
import type { LedgerShare } from './memory-ledger.ts';
import { Resources } from '../../lib/kube/coordinates.ts';

/** Which of a target's pods an action takes first (edges/pod-choice.ts). */
export type PodOrder =
  /** Not ready before ready, then most restarts, then oldest: the pod in the worst shape. */
  | 'worst'
  /** The highest ordinal (`NAME-N`): the pod a StatefulSet itself would remove first. */
  | 'highestOrdinal';

/** How the operator acts on one target kind. */
export interface ActingRules {
  /** The kind, as the target names it. */
  readonly kind: string;
  /** The resource whose `scale` subresource is read and written (and, for a cached kind, listed and watched). */
  readonly resource: ResourceType;
  /**
   * How a pod's controller chain leads to the target: through a ReplicaSet it controls (a
   * Deployment), through whatever owners the pods name (`owners`: any other kind, as far as
   * edges/owner-chain.ts follows them), or undefined when the target is its pods'
   * controller itself (a StatefulSet).
   */
  readonly via?: 'ReplicaSet' | 'owners';
  readonly podOrder: PodOrder;
}

/** What the operator does differently for one cached target kind. */
export interface TargetKindRules extends ActingRules {
  readonly kind: TargetKind;
  /**
   * Most JSON one page of the cache's LIST may carry, in bytes: the page is parsed whole
   * before the transform drops a pod template as large as etcd stores (pageSizeFor gives
   * the objects per page).
   */
  readonly pageBytes: number;
  /**
   * The cache's share of the memory ledger (memory-ledger.ts), in heap charge, and one
   * namespace's share of it: one tenant cannot fill it alone.
   */
  readonly share: LedgerShare;
}

const MIB = 1024 * 1024;

/**
 * Every target kind's rules.
 * - Deployment: pages of 16 MiB (10 objects of etcd's largest); a quarter of the ledger
 *   (~24 MiB of heap charge at the shipped limit: a trimmed Deployment with a three-label
 *   selector is charged ~2 KiB, so ~12,000 of them), an eighth of that per namespace.
 * - StatefulSet: pages of 8 MiB (5 objects), so its first list beside the AITask's and the
 *   Deployments' adds half a page to the peak; an eighth of the ledger (~12 MiB, ~6,000),
 *   an eighth of that per namespace. Clusters run far fewer StatefulSets than Deployments.
 */
export const TARGET_KINDS: Readonly<Record<TargetKind, TargetKindRules>> = {
  Deployment: {
    kind: 'Deployment',
    resource: Resources.deployments,
    via: 'ReplicaSet',
    podOrder: 'worst',
    pageBytes: 16 * MIB,
    share: { cache: 1 / 4, namespace: 1 / 8 },
  },
  StatefulSet: {
    kind: 'StatefulSet',
    resource: Resources.statefulsets,
    podOrder: 'highestOrdinal',
    pageBytes: 8 * MIB,
    share: { cache: 1 / 8, namespace: 1 / 8 },
  },
};

/** A record of `f` applied to every cached target kind. */
export function perKind<T>(f: (kind: TargetKind) => T): Record<TargetKind, T> {
  return Object.fromEntries(KINDS.map((kind) => [kind, f(kind)])) as Record<TargetKind, T>;
}

/**
 * The rules of `target`'s kind: a cached kind's (its cache's transform set `kind`, trim.ts
 * trimWorkload), or, for a target read through /scale, its discovered resource with pods
 * found through their owners, the worst first. Throws on a workload that says neither:
 * acting on it as another kind could scale a different object of the same name.
 */
export function rulesOf(target: Workload): ActingRules {
  const { kind, scaleResource } = target;
  if (scaleResource !== undefined && kind !== undefined)
    return { kind, resource: scaleResource, via: 'owners', podOrder: 'worst' };
  if (kind !== undefined && (KINDS as readonly string[]).includes(kind))
    return TARGET_KINDS[kind as TargetKind];
  throw new Error(
    `the target ${target.metadata.namespace ?? ''}/${target.metadata.name ?? ''} does not say its kind`,
  );
}
