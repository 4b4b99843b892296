// Where an AITask's target lives. `spec.target.namespace` is optional: left out, the target
// is in the AITask's own namespace. Every reader of the target resolves it here, so the
// operator's cache lookups, its decisions, its refusals and the plugin agree on which
// workload is meant.

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

/** `task`'s target as people read it: "Kind namespace/name" (e.g. "StatefulSet shop/redis"). */
export function targetRef(
  task: TargetRef & { readonly spec: { readonly target: { readonly kind: string; readonly name: string } } },
): string {
  return `${task.spec.target.kind} ${targetKey(task)}`;
}
