// The targets an AITask's `spec.target` names, behind one reader: a cached kind (a Deployment
// or a StatefulSet, one Informer per kind: runtime/target-kinds.ts) from its cache, any other
// kind through its /scale subresource (scale-targets.ts); or why the operator would not read
// it. The AITask cache's `target` index keys name the kind too (targetIndexKey), so a
// Deployment and a StatefulSet of the same name are two targets, each owned by its own AITask.

import { builtinKind, targetKey, targetTypeName } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { Informer } from './runtime/informer.ts';
import type { Workload } from './runtime/kinds.ts';
import { TARGET_KINDS } from './runtime/target-kinds.ts';
import type { ScaleTargets } from './scale-targets.ts';

/** The parts of an AITask that name its target. */
export type Targeting = Pick<v2.AITask, 'metadata' | 'spec'>;

/** Why the operator does not read a target: a short reason (the refusal's kind) and a sentence. */
export interface TargetRefusal {
  readonly reason: string;
  readonly message: string;
}

/** What reading a task's target found: the workload, or nothing (missing), or why it was refused. */
export type TargetLookup =
  | { readonly workload: Workload; readonly refused?: undefined }
  | { readonly workload?: undefined; readonly refused?: TargetRefusal };

/** What reconcile reads of the targets. */
export interface TargetReader {
  /**
   * The target `task`'s spec.target names: from a cached kind's cache (no request), or for
   * any other kind one GET of its /scale (after discovery, kept per group-version). Rejects
   * only on errors a retry may fix (the reconcile's backoff).
   */
  read(task: Targeting): Promise<TargetLookup>;
}

/** The AITask cache's `target` index key of the object of type `typeName` (targetTypeName) under `key` (namespace/name). */
export function targetIndexKey(typeName: string, key: string): string {
  return `${typeName} ${key}`;
}

/** The `target` index key of what `task` names: its type (targetTypeName), then namespace/name. */
export function taskTargetIndexKey(task: Targeting): string {
  return targetIndexKey(targetTypeName(task.spec.target), targetKey(task));
}

/** The sentence of a cached kind the operator may not list and watch: `why` is the apiserver's answer. */
function forbiddenKind(kind: v2.TargetKind, why: string): string {
  const { plural, group } = TARGET_KINDS[kind].resource;
  return `the operator may not list and watch ${plural} in API group ${group} (${why}); an admin grants them in its ClusterRole`;
}

/** One Informer per cached kind, read by what a task names; other kinds through /scale. */
export class TargetCaches implements TargetReader {
  /** The informer of each cached kind. */
  readonly byKind: Readonly<Record<v2.TargetKind, Informer<Workload>>>;
  readonly #scale: ScaleTargets;

  constructor(byKind: Readonly<Record<v2.TargetKind, Informer<Workload>>>, scale: ScaleTargets) {
    this.byKind = byKind;
    this.#scale = scale;
  }

  read(task: Targeting): Promise<TargetLookup> {
    const kind = builtinKind(task.spec.target);
    return kind === undefined ? this.#scale.read(task) : Promise.resolve(this.#cached(kind, task));
  }

  #cached(kind: v2.TargetKind, task: Targeting): TargetLookup {
    const cache = this.byKind[kind];
    const key = targetKey(task);
    const workload = cache.get(key);
    if (workload !== undefined) return { workload };
    if (cache.forbidden !== undefined)
      return { refused: { reason: 'Forbidden', message: forbiddenKind(kind, cache.forbidden) } };
    const refusal = cache.refusal(key);
    return refusal !== undefined ? { refused: refusal } : {};
  }
}
