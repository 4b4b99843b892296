// Who cordoned a node, recorded on the Node itself. `status.cordonedNodes` of an AITask can
// be written by anyone allowed to write `aitasks/status`, so it cannot decide which nodes
// the finalizer (or `kubectl aiops force-finalize`) uncordons: the operator marks each node
// it cordons with the AITask's UID, in the same patch that cordons it, and a node is
// uncordoned for an AITask only while it carries that AITask's mark. The operator and the
// plugin both use this one rule.

/** Annotation on a Node the operator cordoned: the UID of the AITask it cordoned it for. */
export const CORDONED_BY_ANNOTATION = 'aiops.example.com/cordoned-by';

/** The parts of a core/v1 Node the rule reads. */
export interface MarkedNode {
  readonly metadata?: {
    readonly annotations?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
  };
  readonly spec?: { readonly unschedulable?: boolean };
}

/** True when `node` is cordoned and carries the mark of the AITask with UID `taskUID` (never for an empty UID). */
export function cordonedBy(node: MarkedNode | undefined, taskUID: string | undefined): boolean {
  return (
    taskUID !== undefined &&
    taskUID !== '' &&
    node?.spec?.unschedulable === true &&
    node.metadata?.annotations?.[CORDONED_BY_ANNOTATION] === taskUID
  );
}

/**
 * The merge patch cordoning a node for the AITask `taskUID` and marking it, bound to the
 * node's `resourceVersion` as read when the cordon was allowed (a change since: 409).
 */
export function cordonPatch(taskUID: string, resourceVersion: string): object {
  return {
    metadata: { annotations: { [CORDONED_BY_ANNOTATION]: taskUID }, resourceVersion },
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
    metadata: { annotations: { [CORDONED_BY_ANNOTATION]: null }, resourceVersion },
    spec: { unschedulable: null },
  };
}
