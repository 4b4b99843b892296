// Manual approval: an AITask with `approval: Manual` keeps its decision in
// `status.pendingDecision` (blockedBy AwaitingApproval) until someone sets the annotation
// aiops.example.com/approve to that decision's id (`kubectl aiops approve`). An approval of
// the decision still waiting, unchanged, turns the rules' verdict into an action, once; any
// other value is stale and ignored with an Event. Unchanged means bound to what the approver
// saw: the AITask's generation, the target it names (and its UID, when known), the
// action with its replicas, and the pod or node a RestartPod or CordonNode chose (recorded
// while it waits; `choiceChanged` compares it with the one chosen when the approval is
// executed). When any of it changed the approval is void, and the decision is
// made again (evaluate.ts sameDecision) and waits for a new approval. Either way the
// reconciler removes the annotation afterwards. Pure.

import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import type { Verdict } from './decide.ts';
import { decisionTarget } from './status-parts.ts';
import { planEffect, type EventSpec } from './vocabulary.ts';

/** The outcome of looking at the approval annotation. */
export interface ApprovalResult {
  /** The verdict to go on with (`act` when the approval applies). */
  readonly verdict: Verdict;
  /** Id of the approved decision (the action keeps it). */
  readonly approvedId?: string;
  /** Event explaining an ignored approval. */
  readonly ignored?: EventSpec;
  /** True when the annotation is present and must be removed after this reconcile. */
  readonly consume: boolean;
}

/** The approval annotation's value, if set. */
export function approvalOf(task: Pick<v2.AITask, 'metadata'>): string | undefined {
  return task.metadata.annotations?.[APPROVE_ANNOTATION];
}

/**
 * Applies the approval annotation of `task` to the rules' `verdict`; `targetUID` is the UID of
 * the target the spec names, as observed now (when known).
 */
export function applyApproval(
  task: Pick<v2.AITask, 'metadata' | 'spec' | 'status'>,
  verdict: Verdict,
  targetUID?: string,
): ApprovalResult {
  const approved = approvalOf(task);
  if (approved === undefined) return { verdict, consume: false };
  const pending = task.status?.pendingDecision;
  const waiting = pending?.blockedBy === 'AwaitingApproval' ? pending : undefined;
  const ignore = (why: string): ApprovalResult => ({
    verdict,
    consume: true,
    ignored: {
      type: 'Warning',
      reason: 'ApprovalIgnored',
      action: 'Approve',
      note: `approval of decision "${approved.slice(0, 64)}" ignored: ${why}`,
    },
  });
  if (waiting === undefined) return ignore('no decision is waiting for approval');
  if (waiting.id !== approved) return ignore(`the decision waiting for approval is ${waiting.id}`);
  const changed = bindingChanged(task, waiting, targetUID);
  if (changed !== undefined)
    return ignore(`${changed} since it was made; the decision is made again and waits for a new approval`);
  if (verdict.kind !== 'blocked' || verdict.blockedBy !== 'AwaitingApproval' || verdict.plan === undefined)
    return ignore(`the rules no longer call for ${waiting.action} (${verdict.kind})`);
  const effect = planEffect(verdict.plan);
  if (
    verdict.plan.action !== waiting.action ||
    effect.replicas !== waiting.effect?.replicas ||
    effect.fromReplicas !== waiting.effect?.fromReplicas
  )
    return ignore('the decision changed since it was approved; approve the new one');
  return {
    verdict: { kind: 'act', value: verdict.value, since: verdict.since, plan: verdict.plan },
    approvedId: waiting.id,
    consume: true,
  };
}

/** What changed of what the approver saw of `waiting` (generation, target, its UID), if anything. */
function bindingChanged(
  task: Pick<v2.AITask, 'metadata' | 'spec'>,
  waiting: v2.DecisionRecord,
  targetUID: string | undefined,
): string | undefined {
  const generation = task.metadata.generation ?? 0;
  if (waiting.generation === undefined || waiting.target === undefined)
    return 'the decision records no generation or target to bind the approval to';
  const was = waiting.target;
  const now = decisionTarget(task);
  if (was.namespace !== now.namespace || was.name !== now.name)
    return `the target changed from ${task.spec.target.kind} ${was.namespace}/${was.name} to ${now.namespace}/${now.name}`;
  if (waiting.generation !== generation)
    return `the AITask changed from generation ${waiting.generation} to ${generation}`;
  if (was.uid !== undefined && targetUID !== undefined && was.uid !== targetUID)
    return `${task.spec.target.kind} ${was.namespace}/${was.name} was replaced (UID ${was.uid} → ${targetUID})`;
  return undefined;
}

/**
 * How the pod or node chosen now (`now`, when the approved decision is executed) differs from
 * the one the approved decision recorded (`approved`), if it does. A decision that recorded
 * none (its pod could not be resolved while it waited) binds none.
 */
export function choiceChanged(
  approved: v2.DecisionEffect | undefined,
  now: v2.DecisionEffect,
): string | undefined {
  if (approved?.pod !== undefined && (approved.pod !== now.pod || approved.podUID !== now.podUID))
    return `the pod chosen changed from ${approved.pod} to ${now.pod ?? 'none'}`;
  if (approved?.node !== undefined && approved.node !== now.node)
    return `the node chosen changed from ${approved.node} to ${now.node ?? 'none'}`;
  return undefined;
}

/** The Event of an approval voided because `why` (choiceChanged) at execution. */
export function approvalVoided(id: string, why: string): EventSpec {
  return {
    type: 'Warning',
    reason: 'ApprovalIgnored',
    action: 'Approve',
    note: `approval of decision "${id.slice(0, 64)}" ignored: ${why} since it was made; the decision is made again and waits for a new approval`,
  };
}
