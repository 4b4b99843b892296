// Which pod a RestartPod or CordonNode acts on, as pure functions over what the adapter read:
// only pods whose controller chain leads to the target (a Deployment's through its
// ReplicaSets, a StatefulSet's directly: controller references, by UID, never labels), and
// among them the one the target kind takes first (target-kinds.ts PodOrder). Kept apart from
// actions.ts, which does the I/O.

import type { ObjectMeta } from '../../api/schema/common.ts';
import type { Pod } from '../runtime/kinds.ts';
import type { PodOrder } from '../runtime/target-kinds.ts';

function ready(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
  );
}

function restarts(pod: Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/** The ordinal of a StatefulSet's pod (`NAME-N`), -1 when its name ends in none. */
export function ordinal(pod: Pod): number {
  const m = /-(\d+)$/.exec(pod.metadata.name ?? '');
  return m?.[1] !== undefined ? Number(m[1]) : -1;
}

/** Worst first: a not-ready pod before a ready one, then the most restarts, then the oldest. */
function worstFirst(a: Pod, b: Pod): number {
  return (
    Number(ready(a)) - Number(ready(b)) ||
    restarts(b) - restarts(a) ||
    (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '')
  );
}

/**
 * The pod to act on, among those not being deleted: `named` (the pod the metric names) when
 * it is one of them; else by `order` ('worst': a not-ready pod before a ready one, then the
 * most restarts, then the oldest; 'highestOrdinal': the highest `NAME-N`, as a StatefulSet
 * scales down), then by name (deterministic). Undefined when none qualifies.
 */
export function pickPod(pods: readonly Pod[], order: PodOrder = 'worst', named?: string): Pod | undefined {
  const live = pods.filter((p) => p.metadata.deletionTimestamp === undefined);
  const chosen = named !== undefined ? live.find((p) => p.metadata.name === named) : undefined;
  if (chosen !== undefined) return chosen;
  const first = order === 'worst' ? worstFirst : (a: Pod, b: Pod) => ordinal(b) - ordinal(a);
  return live.sort((a, b) => first(a, b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
}

/** The apps/v1 ReplicaSet fields ownership reads. */
export interface ReplicaSet {
  metadata: ObjectMeta;
}

/** The UID of `meta`'s controller of `kind` (the ownerReference with controller=true), if any. */
function controllerUID(meta: ObjectMeta, kind: string): string | undefined {
  const ref = (meta.ownerReferences ?? []).find((r) => r.controller === true);
  return ref?.kind === kind && typeof ref.uid === 'string' && ref.uid !== '' ? ref.uid : undefined;
}

/**
 * UIDs of the ReplicaSets among `sets` whose controller is the Deployment with UID
 * `deploymentUID` (by UID, never by labels or names). An empty UID owns nothing.
 */
export function ownedSetUIDs(deploymentUID: string | undefined, sets: readonly ReplicaSet[]): string[] {
  if (deploymentUID === undefined || deploymentUID === '') return [];
  return sets
    .filter((rs) => controllerUID(rs.metadata, 'Deployment') === deploymentUID)
    .flatMap((rs) => (rs.metadata.uid !== undefined && rs.metadata.uid !== '' ? [rs.metadata.uid] : []));
}

/** The pods among `pods` whose controller is a `kind` with a UID in `controllerUIDs`. */
export function podsControlledBy(
  kind: string,
  controllerUIDs: ReadonlySet<string>,
  pods: readonly Pod[],
): Pod[] {
  return pods.filter((p) => {
    const uid = controllerUID(p.metadata, kind);
    return uid !== undefined && controllerUIDs.has(uid);
  });
}
