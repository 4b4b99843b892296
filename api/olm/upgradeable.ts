// Whether OLM may upgrade the operator now, from the AITask CRD's state: not while objects
// may still be stored at a version other than the storage version, because a next release
// may stop serving that version and OLM would then refuse it, or strand the objects. The
// operator reports it as the `Upgradeable` condition of its OLM OperatorCondition.

/** A condition as OperatorCondition's `spec.conditions` holds it (metav1.Condition). */
export interface OperatorConditionEntry {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
}

/** The part of the CRD the decision reads. */
export interface StoredVersionsView {
  readonly spec: { readonly versions: readonly { readonly name: string; readonly storage: boolean }[] };
  readonly status?: { readonly storedVersions?: readonly string[] };
}

/**
 * The `Upgradeable` condition for `crd`: False with reason `StorageMigrationNeeded` while
 * `status.storedVersions` lists a version other than the storage version (the message names
 * them and the command that fixes it), else True with reason `StorageCurrent`.
 * `lastTransitionTime` is `now` (ISO 8601); `mergeCondition` keeps the old one when the
 * status did not change.
 */
export function upgradeableCondition(crd: StoredVersionsView, now: string): OperatorConditionEntry {
  const storage = crd.spec.versions.find((v) => v.storage)?.name ?? '';
  const stored = crd.status?.storedVersions ?? [];
  const old = stored.filter((v) => v !== storage);
  if (old.length === 0)
    return {
      type: 'Upgradeable',
      status: 'True',
      reason: 'StorageCurrent',
      message: `every AITask is stored at ${storage}`,
      lastTransitionTime: now,
    };
  return {
    type: 'Upgradeable',
    status: 'False',
    reason: 'StorageMigrationNeeded',
    message:
      `AITasks may still be stored at ${old.join(', ')} (CRD storedVersions: ${stored.join(', ')}); ` +
      `run \`kubectl aiops migrate-storage\` so a later release may stop serving ${old.join(', ')}`,
    lastTransitionTime: now,
  };
}

/**
 * `conditions` with `next` put in place of the entry of its type: the old entry's
 * `lastTransitionTime` is kept when the status is unchanged. Returns undefined when nothing
 * would change (so the caller writes nothing).
 */
export function mergeCondition(
  conditions: readonly OperatorConditionEntry[],
  next: OperatorConditionEntry,
): OperatorConditionEntry[] | undefined {
  const old = conditions.find((c) => c.type === next.type);
  const entry = old?.status === next.status ? { ...next, lastTransitionTime: old.lastTransitionTime } : next;
  if (old && old.status === entry.status && old.reason === entry.reason && old.message === entry.message)
    return undefined;
  return [...conditions.filter((c) => c.type !== next.type), entry];
}
