// Where an AITask's target lives and what it is. `spec.target.namespace` is optional: left
// out, the target is in the AITask's own namespace. `spec.target.apiVersion` is optional too:
// left out, it is apps/v1, and only then (or when it says apps/v1) are Deployment and
// StatefulSet the kinds the operator caches; any other kind is one found by discovery and
// read through /scale. Every reader of the target resolves it here, so the operator's cache
// lookups, its decisions, its refusals and the plugin agree on which workload is meant.

import { TARGET_DEFAULT_API_VERSION, TARGET_KINDS, type TargetKind } from './v2.ts';

/** The parts of `spec.target` that say what kind of object it is. */
export interface TargetType {
  readonly apiVersion?: string | undefined;
  readonly kind: string;
}

/** The group/version `target` names: its apiVersion, else apps/v1. */
export function targetApiVersion(target: TargetType): string {
  return target.apiVersion ?? TARGET_DEFAULT_API_VERSION;
}

/** The API group of `target` ('' for the core group). */
export function targetGroup(target: TargetType): string {
  const apiVersion = targetApiVersion(target);
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The kind the operator caches that `target` names (an apps/v1 Deployment or StatefulSet),
 * or undefined for any other kind, which is found by discovery and read through /scale.
 */
export function builtinKind(target: TargetType): TargetKind | undefined {
  if (targetApiVersion(target) !== TARGET_DEFAULT_API_VERSION) return undefined;
  return (TARGET_KINDS as readonly string[]).includes(target.kind) ? (target.kind as TargetKind) : undefined;
}

/**
 * `target`'s type as people read it: the kind alone for a Deployment or StatefulSet,
 * `Kind.group` for another group's kind (kubectl's form, e.g. "Rollout.argoproj.io"),
 * `Kind` of `group/version` never: one group's kinds share their name across versions.
 */
export function targetTypeName(target: TargetType): string {
  if (builtinKind(target) !== undefined) return target.kind;
  const group = targetGroup(target);
  return group === '' ? target.kind : `${target.kind}.${group}`;
}

/** The parts of an AITask that name its target's namespace. */
export interface TargetRef {
  readonly metadata: { readonly namespace?: string | undefined };
  readonly spec: { readonly target: { readonly namespace?: string | undefined } };
}

/** The namespace of `task`'s target: `spec.target.namespace`, else the AITask's own ('' when neither is set). */
export function targetNamespace(task: TargetRef): string {
  return task.spec.target.namespace ?? task.metadata.namespace ?? '';
}

/** The cache key `namespace/name` of `task`'s target (within its kind's cache). */
export function targetKey(
  task: TargetRef & { readonly spec: { readonly target: { readonly name: string } } },
): string {
  return `${targetNamespace(task)}/${task.spec.target.name}`;
}

/**
 * `task`'s target as people read it: "Type namespace/name" (targetTypeName; e.g.
 * "StatefulSet shop/redis", "Rollout.argoproj.io shop/web").
 */
export function targetRef(
  task: TargetRef & { readonly spec: { readonly target: TargetType & { readonly name: string } } },
): string {
  return `${targetTypeName(task.spec.target)} ${targetKey(task)}`;
}
