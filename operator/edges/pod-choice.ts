// Which pod a RestartPod or CordonNode acts on, as pure functions over what the adapter read:
// only pods the target Deployment owns through its ReplicaSets (controller references, by UID,
// never labels), and among them the worst one. Kept apart from actions.ts, which does the I/O.

import type { ObjectMeta } from '../../api/schema/common.ts';
import type { Pod } from '../runtime/kinds.ts';

function ready(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
  );
}

function restarts(pod: Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/**
 * The pod to act on: not being deleted; a not-ready pod before a ready one, then the most
 * restarts, then the oldest, then by name (deterministic). Undefined when none qualifies.
 */
export function pickPod(pods: readonly Pod[]): Pod | undefined {
  return pods
    .filter((p) => p.metadata.deletionTimestamp === undefined)
    .sort(
      (a, b) =>
        Number(ready(a)) - Number(ready(b)) ||
        restarts(b) - restarts(a) ||
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    )[0];
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

/** The pods among `pods` whose controller is a ReplicaSet with a UID in `setUIDs`. */
export function podsOfSets(setUIDs: ReadonlySet<string>, pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => {
    const rs = controllerUID(p.metadata, 'ReplicaSet');
    return rs !== undefined && setUIDs.has(rs);
  });
}
