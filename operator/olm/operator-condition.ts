// What the operator tells OLM about itself through its OperatorCondition, decided from
// plain data so it can be table-tested: `Upgradeable` from the AITask CRD (not while objects
// may still be stored at a version other than the storage version, so OLM holds a next
// release that could stop serving it), and `Available` / `Progressing` / `Degraded` from the
// running operator's own state, the way ClusterOperators and kstatus users read them.
//
// `Upgradeable` judges only the CRD the operator's own release installed. During an OLM
// upgrade the replaced release keeps running while the new release's CRD is already in
// place; if it judged that CRD (storedVersions [v1, v2] right after storage moved to v2) it
// would report False and OLM would hold the very upgrade under way.

import { PACKAGE_NAME } from '../../api/releases.ts';
import { CRD_RELEASES } from '../../api/upgrade/crd-releases.ts';

/** A condition as OperatorCondition's `spec.conditions` holds it (metav1.Condition). */
export interface OperatorConditionEntry {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
}

/** The part of the AITask CRD `Upgradeable` reads. */
export interface StoredVersionsView {
  readonly spec: { readonly versions: readonly { readonly name: string; readonly storage: boolean }[] };
  readonly status?: { readonly storedVersions?: readonly string[] };
}

/** The running operator's own state, as `AssembledOperator.health()` reports it. */
export interface OperatorHealth {
  /** This replica holds the leader Lease (always true without leader election). */
  readonly leading: boolean;
  /** Every cache has applied its first list. */
  readonly synced: boolean;
  /** Why a watch keeps failing (three or more failures in a row), else undefined. */
  readonly failing: string | undefined;
}

/**
 * The storage version of the AITask CRD that the release `operatorConditionName` names
 * installed. OLM names the OperatorCondition after the CSV (`aiops-operator.v<version>`);
 * a name of another form, or a version not in the CRD release history, means the current
 * release (the last entry).
 */
export function ownStorageVersion(operatorConditionName: string): string {
  const prefix = `${PACKAGE_NAME}.v`;
  const version = operatorConditionName.startsWith(prefix)
    ? operatorConditionName.slice(prefix.length)
    : undefined;
  const own = CRD_RELEASES.find((r) => r.version === version) ?? CRD_RELEASES.at(-1);
  if (own === undefined) throw new Error('the CRD release history is empty');
  return own.storage;
}

/**
 * The `Upgradeable` condition for `crd` as seen by a release whose CRD stores `ownStorage`:
 * False with reason `StorageMigrationNeeded` while `status.storedVersions` lists a version
 * other than the storage version (the message names them and the command that fixes it),
 * True with reason `StorageCurrent` otherwise. Undefined (write nothing) when the CRD's
 * storage version is not `ownStorage`: another release's CRD is installed, so this release
 * is being replaced and has nothing to hold.
 */
export function upgradeableCondition(
  crd: StoredVersionsView,
  ownStorage: string,
  now: string,
): OperatorConditionEntry | undefined {
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (storage !== ownStorage) return undefined;
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
      `run \`kubectl aiops migrate-storage\` so that a later release may stop serving ${old.join(', ')}`,
    lastTransitionTime: now,
  };
}

/**
 * `Available`, `Progressing` and `Degraded` for a leading replica (a standby reports
 * nothing: the leader speaks for the operator). Available once the caches are synced and
 * AITasks are reconciled; Progressing while the caches fill; Degraded while a watch keeps
 * failing (the operator then acts on what it last saw).
 */
export function healthConditions(health: OperatorHealth, now: string): OperatorConditionEntry[] {
  const at = { lastTransitionTime: now };
  return [
    health.synced
      ? {
          type: 'Available',
          status: 'True',
          reason: 'Reconciling',
          message: 'the leader reconciles AITasks',
          ...at,
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'CachesNotSynced',
          message: 'the leader is still listing AITasks and Deployments',
          ...at,
        },
    health.synced
      ? {
          type: 'Progressing',
          status: 'False',
          reason: 'Started',
          message: 'caches synced; reconciling',
          ...at,
        }
      : {
          type: 'Progressing',
          status: 'True',
          reason: 'Starting',
          message: 'listing AITasks and Deployments',
          ...at,
        },
    health.failing === undefined
      ? {
          type: 'Degraded',
          status: 'False',
          reason: 'WatchesHealthy',
          message: 'every watch is connected',
          ...at,
        }
      : { type: 'Degraded', status: 'True', reason: 'WatchFailing', message: health.failing, ...at },
  ];
}

/**
 * `conditions` with each of `next` put in place of the entry of its type; entries of other
 * types (another writer's) are kept. An entry whose status is unchanged keeps its
 * `lastTransitionTime`. Returns undefined when nothing would change, so the caller writes
 * nothing.
 */
export function mergeConditions(
  conditions: readonly OperatorConditionEntry[],
  next: readonly OperatorConditionEntry[],
): OperatorConditionEntry[] | undefined {
  let changed = false;
  const out = [...conditions];
  for (const n of next) {
    const i = out.findIndex((c) => c.type === n.type);
    const old = i >= 0 ? out[i] : undefined;
    if (old && old.status === n.status && old.reason === n.reason && old.message === n.message) continue;
    changed = true;
    const entry = old?.status === n.status ? { ...n, lastTransitionTime: old.lastTransitionTime } : n;
    if (i >= 0) out[i] = entry;
    else out.push(entry);
  }
  return changed ? out : undefined;
}
