// The target caches, one Informer per target kind (runtime/target-kinds.ts), behind one
// reader: the object an AITask's `spec.target` names, or why its cache refused it. The
// AITask cache's `target` index keys name the kind too (targetIndexKey), so a Deployment and
// a StatefulSet of the same name are two targets, each owned by its own AITask.

import { targetKey } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { Refusal } from './runtime/cache-budget.ts';
import type { Informer } from './runtime/informer.ts';
import type { Workload } from './runtime/kinds.ts';
import { TARGET_KINDS } from './runtime/target-kinds.ts';

/** The parts of an AITask that name its target. */
type Targeting = Pick<v2.AITask, 'metadata' | 'spec'>;

/** What reconcile reads of the targets. */
export interface TargetReader {
  /** The cached object `task`'s spec.target names; undefined when missing or refused. */
  get(task: Targeting): Workload | undefined;
  /** Why the cache refused the object `task`'s spec.target names, if it did. */
  refusal(task: Targeting): Refusal | undefined;
  /** Why the operator may not read targets of `task`'s kind at all (a missing grant), if so. */
  forbidden(task: Targeting): string | undefined;
}

/** The AITask cache's `target` index key of the `kind` object cached under `key` (namespace/name). */
export function targetIndexKey(kind: v2.TargetKind, key: string): string {
  return `${kind} ${key}`;
}

/** The `target` index key of what `task` names: its kind, then namespace/name. */
export function taskTargetIndexKey(task: Targeting): string {
  return targetIndexKey(task.spec.target.kind, targetKey(task));
}

/** One Informer per target kind, read by what a task names. */
export class TargetCaches implements TargetReader {
  /** The informer of each kind. */
  readonly byKind: Readonly<Record<v2.TargetKind, Informer<Workload>>>;

  constructor(byKind: Readonly<Record<v2.TargetKind, Informer<Workload>>>) {
    this.byKind = byKind;
  }

  get(task: Targeting): Workload | undefined {
    return this.byKind[task.spec.target.kind].get(targetKey(task));
  }

  refusal(task: Targeting): Refusal | undefined {
    return this.byKind[task.spec.target.kind].refusal(targetKey(task));
  }

  forbidden(task: Targeting): string | undefined {
    const kind = task.spec.target.kind;
    const why = this.byKind[kind].forbidden;
    if (why === undefined) return undefined;
    const { plural, group } = TARGET_KINDS[kind].resource;
    return `the operator may not list and watch ${plural} in API group ${group} (${why}); an admin grants them in its ClusterRole`;
  }
}
