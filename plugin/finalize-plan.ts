// The decision behind `kubectl aiops force-finalize`, as a pure plan: which finalizers go,
// what cleanup the operator's finalizer still owes (nodes to uncordon: only those carrying
// this AITask's mark, the operator's own rule in api/cordon.ts), the evidence about the
// operator, and whether to refuse. The command only reads inputs and applies it. The nodes
// looked at are those carrying the mark and those status.cordonedNodes names (anyone who may
// write aitasks/status writes that list, thousands of names if they like): every node to
// uncordon is in the plan, but of the nodes it skips only the first MAX_SKIPS_SHOWN are, with
// a count of the rest, so the plan stays a screenful whatever status says.

import { CORDONED_BY_ANNOTATION, cordonedBy, cordonHeldBy, markOf } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import { leaseLiveness, type Lease, type Liveness } from '../lib/lease-liveness.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { NodeLike } from './kinds.ts';

/** Lease evidence, or why there is none. */
export type OperatorEvidence = (Liveness | { verdict: 'unknown'; message: string }) & { lease: string };

/** One node the finalizer would uncordon, and whether this run will. */
export interface CleanupStep {
  node: string;
  action: 'uncordon' | 'skip';
  why: string;
}

/** Everything force-finalize will do, or why it refuses. */
export interface FinalizePlan {
  name: string;
  namespace: string;
  resourceVersion: string;
  deletionTimestamp?: string;
  finalizers: { name: string; action: 'remove' | 'keep' }[];
  operator: OperatorEvidence;
  /** Every node to uncordon, then the first MAX_SKIPS_SHOWN nodes skipped. */
  cleanup: CleanupStep[];
  /** Nodes skipped beyond those in `cleanup` (named in status.cordonedNodes, none to uncordon). */
  cleanupOmitted: number;
  /** Set when the command must not act (exit 3). */
  refusal?: string;
}

/** The flags that shape a plan. */
export interface FinalizeFlags {
  force: boolean;
  all: boolean;
  skipCleanup: boolean;
}

/** Inputs read from the cluster. */
export interface FinalizeInputs {
  task: v2.AITask;
  operator: OperatorEvidence;
  /** The nodes read, by name (undefined: it no longer exists). */
  nodes: ReadonlyMap<string, NodeLike | undefined>;
  /**
   * True (the default) when `nodes` holds every node of the cluster (one LIST): a name it
   * lacks does not exist. False when only some names were read: a name it lacks was not looked up.
   */
  complete?: boolean;
}

/** Skipped nodes a plan lists before counting the rest: 20. */
export const MAX_SKIPS_SHOWN = 20;

/** The nodes to look at: those status names, then those read carrying this AITask's mark, each once. */
function candidates(inputs: FinalizeInputs): string[] {
  const uid = inputs.task.metadata.uid;
  const marked = [...inputs.nodes]
    .filter(([, n]) => uid !== undefined && uid !== '' && markOf(n)?.uid === uid)
    .map(([name]) => name);
  return [...new Set([...(inputs.task.status?.cordonedNodes ?? []), ...marked])];
}

function cleanupSteps(inputs: FinalizeInputs, flags: FinalizeFlags): CleanupStep[] {
  return candidates(inputs).map((node): CleanupStep => {
    const n = inputs.nodes.get(node);
    if (flags.skipCleanup) return { node, action: 'skip', why: 'skipped by --skip-cleanup: stays cordoned' };
    if (n === undefined && !inputs.nodes.has(node) && inputs.complete === false)
      return {
        node,
        action: 'skip',
        why: 'not looked up: nodes cannot be listed, and only the first names in status are read one by one',
      };
    if (n === undefined) return { node, action: 'skip', why: 'the node no longer exists' };
    if (n.spec?.unschedulable !== true) return { node, action: 'skip', why: 'already schedulable' };
    if (!cordonedBy(n, inputs.task.metadata.uid))
      return {
        node,
        action: 'skip',
        why: `not cordoned by this AITask (no ${CORDONED_BY_ANNOTATION} mark with its UID)`,
      };
    if (!cordonHeldBy(n, inputs.task.metadata.uid))
      return {
        node,
        action: 'skip',
        why: "cordoned again by someone else since this AITask's cordon: its mark no longer holds the node",
      };
    return { node, action: 'uncordon', why: 'cordoned by this AITask' };
  });
}

/**
 * Computes the plan; refuses when the object is not being deleted, or (unless `force`) when
 * the operator is alive or whether it is cannot be told (verdict `unknown`).
 */
export function planFinalize(inputs: FinalizeInputs, flags: FinalizeFlags): FinalizePlan {
  const { metadata } = inputs.task;
  const name = metadata.name ?? '';
  const namespace = metadata.namespace ?? 'default';
  const plan: FinalizePlan = {
    name,
    namespace,
    resourceVersion: metadata.resourceVersion ?? '',
    ...(metadata.deletionTimestamp !== undefined ? { deletionTimestamp: metadata.deletionTimestamp } : {}),
    finalizers: (metadata.finalizers ?? []).map((f) => ({
      name: f,
      action: f === FINALIZER || flags.all ? 'remove' : 'keep',
    })),
    operator: inputs.operator,
    ...bounded((metadata.finalizers ?? []).includes(FINALIZER) ? cleanupSteps(inputs, flags) : []),
  };
  if (metadata.deletionTimestamp === undefined)
    return {
      ...plan,
      refusal: `aitask "${name}" in namespace "${namespace}" is not being deleted: force-finalize only unsticks objects in Terminating (delete it first: kubectl delete aitask ${name} -n ${namespace})`,
    };
  if (inputs.operator.verdict === 'unknown' && !flags.force)
    return {
      ...plan,
      refusal: `cannot tell whether the operator is alive (${inputs.operator.message}), so it may still finalize aitask "${name}" itself: pass --lease-namespace where the operator runs, or --force to act anyway`,
    };
  if (inputs.operator.verdict === 'alive' && !flags.force)
    return {
      ...plan,
      refusal: `the operator is alive (${inputs.operator.message}; Lease ${inputs.operator.lease}), so it will finalize aitask "${name}" itself: read its logs, or pass --force to act anyway`,
    };
  return plan;
}

/** Every uncordon step, then the first MAX_SKIPS_SHOWN skips; how many skips are left out. */
function bounded(steps: readonly CleanupStep[]): { cleanup: CleanupStep[]; cleanupOmitted: number } {
  const uncordon = steps.filter((c) => c.action === 'uncordon');
  const skips = steps.filter((c) => c.action !== 'uncordon');
  return {
    cleanup: [...uncordon, ...skips.slice(0, MAX_SKIPS_SHOWN)],
    cleanupOmitted: Math.max(0, skips.length - MAX_SKIPS_SHOWN),
  };
}

/** True when applying the plan would change anything. */
export function planHasWork(plan: FinalizePlan): boolean {
  return (
    plan.finalizers.some((f) => f.action === 'remove') || plan.cleanup.some((c) => c.action === 'uncordon')
  );
}

const RANK: Record<Liveness['verdict'], number> = { alive: 0, expired: 1, released: 2, absent: 3 };

/**
 * The evidence from every Lease named `name` found across namespaces (the operator's Lease
 * lives in its install namespace, which differs between installs): none → `absent`; else the
 * most alive one (alive, then expired, then released), naming the others when there are several.
 */
export function judgeLeases(found: readonly Lease[], name: string, now: Date): OperatorEvidence {
  const judged = found
    .map((l) => ({
      ...leaseLiveness(l, now),
      lease: `${l.metadata.namespace ?? ''}/${l.metadata.name ?? name}`,
    }))
    .sort((a, b) => RANK[a.verdict] - RANK[b.verdict]);
  const [best] = judged;
  if (best === undefined)
    return {
      ...leaseLiveness(undefined, now),
      message: `no Lease named ${name} in any namespace: the operator is not running or never started`,
      lease: `*/${name}`,
    };
  if (judged.length === 1) return best;
  const all = judged.map((j) => `${j.lease} ${j.verdict}`).join(', ');
  return { ...best, message: `${best.message} (${judged.length} Leases named ${name}: ${all})` };
}
