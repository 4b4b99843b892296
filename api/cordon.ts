// Who cordoned a node, recorded on the Node itself. `status.cordonedNodes` of an AITask can
// be written by anyone allowed to write `aitasks/status`, so it cannot decide which nodes
// the finalizer (or `kubectl aiops force-finalize`) uncordons: the operator marks each node
// it cordons with the AITask's UID (and its namespace, for the per-namespace cordon cap), in
// the same patch that cordons it, and a node is uncordoned for an AITask only while it
// carries that AITask's mark. The operator and the plugin both use this one rule.
//
// A mark outlives a cordon someone else lifted: `kubectl uncordon` leaves annotations alone,
// and a later `kubectl cordon` (or drain) makes the node unschedulable again under the old
// mark. So the operator also asks whether the cordon is still the one it wrote
// (`cordonHeld`): the apiserver's managedFields name the field manager that last set
// `spec.unschedulable`; a cordon is ours while that manager also owns our mark annotation
// (both were set in one patch). An uncordon removes the field from every manager's set and
// a new cordon gives it to whoever wrote it, so after an admin's uncordon + re-cordon the
// owners differ and the old mark no longer lifts anything. Without managedFields (stripped by
// someone with node write) nothing is ever lifted: the conservative side.
//
// Which marks the operator's sweep releases (`markRelease`): a mark whose AITask no longer
// exists (its tenant removed the finalizer, or emptied status.cordonedNodes, and deleted the
// task: nobody else would lift the cordon) and a mark whose cordon is no longer its own. An
// orphan's cordon is lifted only while the mark still holds it; otherwise only the mark goes.

/** Annotation on a Node the operator cordoned: the UID of the AITask it cordoned it for. */
export const CORDONED_BY_ANNOTATION = 'aiops.example.com/cordoned-by';

/**
 * Annotation beside CORDONED_BY_ANNOTATION: the namespace of that AITask, so the
 * per-namespace cordon cap and the sweep of orphaned marks need no AITask lookup. Marks
 * written before it existed have only the UID.
 */
export const CORDONED_BY_NAMESPACE_ANNOTATION = 'aiops.example.com/cordoned-by-namespace';

/** Field manager of the operator's node patches (recorded in the Node's managedFields). */
export const CORDON_FIELD_MANAGER = 'aiops-operator';

/** One metadata.managedFields entry, as far as the rule reads it. */
interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly fieldsV1?: Readonly<Record<string, unknown>>;
}

/** The parts of a core/v1 Node the rule reads. */
export interface MarkedNode {
  readonly metadata?: {
    readonly name?: string;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
    readonly managedFields?: readonly unknown[];
  };
  readonly spec?: { readonly unschedulable?: boolean };
}

/** The mark on `node`: the AITask's UID and (when recorded) namespace; undefined when unmarked. */
export function markOf(node: MarkedNode | undefined): { uid: string; namespace?: string } | undefined {
  const a = node?.metadata?.annotations;
  const uid = a?.[CORDONED_BY_ANNOTATION];
  if (uid === undefined || uid === '') return undefined;
  const namespace = a?.[CORDONED_BY_NAMESPACE_ANNOTATION];
  return namespace !== undefined && namespace !== '' ? { uid, namespace } : { uid };
}

/** True when `node` is cordoned and carries the mark of the AITask with UID `taskUID` (never for an empty UID). */
export function cordonedBy(node: MarkedNode | undefined, taskUID: string | undefined): boolean {
  return (
    taskUID !== undefined &&
    taskUID !== '' &&
    node?.spec?.unschedulable === true &&
    markOf(node)?.uid === taskUID
  );
}

function child(fields: unknown, key: string): unknown {
  return typeof fields === 'object' && fields !== null && Object.hasOwn(fields, key)
    ? (fields as Record<string, unknown>)[key]
    : undefined;
}

/**
 * True when `node` is cordoned by the patch that wrote its mark: one managedFields entry
 * owns both `spec.unschedulable` and the mark annotation. False when unmarked, schedulable,
 * cordoned again by someone else since, or when the node carries no managedFields.
 */
export function cordonHeld(node: MarkedNode | undefined): boolean {
  if (node?.spec?.unschedulable !== true || markOf(node) === undefined) return false;
  return (node.metadata?.managedFields ?? []).some((raw) => {
    const f = (raw as ManagedFieldsEntry | null)?.fieldsV1;
    const annotations = child(child(f, 'f:metadata'), 'f:annotations');
    return (
      child(child(f, 'f:spec'), 'f:unschedulable') !== undefined &&
      child(annotations, `f:${CORDONED_BY_ANNOTATION}`) !== undefined
    );
  });
}

/**
 * The rule the operator uncordons by: `node` carries the mark of the AITask `taskUID` and is
 * still cordoned by the patch that wrote it (`cordonedBy` and `cordonHeld`).
 */
export function cordonHeldBy(node: MarkedNode | undefined, taskUID: string | undefined): boolean {
  return cordonedBy(node, taskUID) && cordonHeld(node);
}

/**
 * The merge patch cordoning a node for the AITask `taskUID` of `namespace` and marking it,
 * bound to the node's `resourceVersion` as read when the cordon was allowed (a change since: 409).
 */
export function cordonPatch(taskUID: string, namespace: string, resourceVersion: string): object {
  return {
    metadata: {
      annotations: { [CORDONED_BY_ANNOTATION]: taskUID, [CORDONED_BY_NAMESPACE_ANNOTATION]: namespace },
      resourceVersion,
    },
    spec: { unschedulable: true },
  };
}

/**
 * The merge patch uncordoning a node that `cordonedBy` said is the AITask's and removing
 * the mark, bound to the `resourceVersion` it was read at, so a cordon someone takes over
 * meanwhile is not lifted (409).
 */
export function uncordonPatch(resourceVersion: string): object {
  return {
    metadata: { ...unmarkPatchMeta(), resourceVersion },
    spec: { unschedulable: null },
  };
}

/**
 * The merge patch removing the mark only (the cordon, if any, is someone else's and stays),
 * bound to `resourceVersion`.
 */
export function unmarkPatch(resourceVersion: string): object {
  return { metadata: { ...unmarkPatchMeta(), resourceVersion } };
}

function unmarkPatchMeta(): { annotations: Record<string, null> } {
  return { annotations: { [CORDONED_BY_ANNOTATION]: null, [CORDONED_BY_NAMESPACE_ANNOTATION]: null } };
}

/** What to do with one node's mark. */
export interface MarkRelease {
  readonly node: string;
  /** UID of the AITask the mark names. */
  readonly uid: string;
  /** Namespace of that AITask when the mark records it. */
  readonly namespace?: string;
  /** `orphaned`: the AITask is gone; `lifted`: the cordon is no longer the one the mark was written with. */
  readonly why: 'orphaned' | 'lifted';
  /** True: uncordon and unmark (the cordon is still the mark's own); false: unmark only. */
  readonly uncordon: boolean;
}

/**
 * A node reduced to what the cordon rules read: what the operator keeps of each node between
 * two lists of them (a few dozen bytes, whatever the Node carries).
 */
export interface CordonState {
  readonly name: string;
  readonly resourceVersion: string;
  readonly unschedulable: boolean;
  /** The mark (`markOf`), when the node carries one. */
  readonly mark?: { readonly uid: string; readonly namespace?: string };
  /** `cordonHeld`: the node is cordoned by the patch that wrote its mark. */
  readonly held: boolean;
}

/** `node` as a CordonState. */
export function cordonState(node: MarkedNode): CordonState {
  const mark = markOf(node);
  return {
    name: node.metadata?.name ?? '',
    resourceVersion: node.metadata?.resourceVersion ?? '',
    unschedulable: node.spec?.unschedulable === true,
    ...(mark !== undefined ? { mark } : {}),
    held: cordonHeld(node),
  };
}

/**
 * The release `node`'s mark needs, if any. `taskExists` says whether the AITask with a UID
 * exists; `scope` (the operator's `--namespace`) limits the decision to marks of that
 * namespace (marks without a namespace are then left alone).
 */
export function markRelease(
  node: MarkedNode,
  taskExists: (uid: string) => boolean,
  scope?: string,
): MarkRelease | undefined {
  return releaseOf(cordonState(node), taskExists, scope);
}

/** `markRelease` decided on a node's CordonState. */
export function releaseOf(
  state: CordonState,
  taskExists: (uid: string) => boolean,
  scope?: string,
): MarkRelease | undefined {
  const { mark, held } = state;
  if (mark === undefined) return undefined;
  if (scope !== undefined && mark.namespace !== scope) return undefined;
  const base = {
    node: state.name,
    uid: mark.uid,
    ...(mark.namespace !== undefined ? { namespace: mark.namespace } : {}),
  };
  if (!taskExists(mark.uid)) return { ...base, why: 'orphaned', uncordon: held };
  if (!held) return { ...base, why: 'lifted', uncordon: false };
  return undefined;
}

/** `markRelease` of every node, in the order given. */
export function staleMarks(
  nodes: readonly MarkedNode[],
  taskExists: (uid: string) => boolean,
  scope?: string,
): MarkRelease[] {
  return staleMarksOf(nodes.map(cordonState), taskExists, scope);
}

/** `releaseOf` of every node state, in the order given. */
export function staleMarksOf(
  states: readonly CordonState[],
  taskExists: (uid: string) => boolean,
  scope?: string,
): MarkRelease[] {
  return states.flatMap((s) => releaseOf(s, taskExists, scope) ?? []);
}

/** Names of the nodes in `states` carrying the mark of the AITask `taskUID` (none for an empty UID). */
export function markedFor(states: readonly CordonState[], taskUID: string | undefined): string[] {
  if (taskUID === undefined || taskUID === '') return [];
  return states.filter((s) => s.mark?.uid === taskUID).map((s) => s.name);
}
