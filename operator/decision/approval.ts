// Manual approval: an AITask with `approval: Manual` keeps its decision in
// `status.pendingDecision` (blockedBy AwaitingApproval) until someone sets the annotation
// aiops.example.com/approve to that decision's id (`kubectl aiops approve`). An approval of
// the decision still waiting, unchanged, turns the rules' verdict into an action, once; any
// other value is stale and ignored with an Event. Either way the reconciler removes the
// annotation afterwards. Pure.

import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import type { Verdict } from './decide.ts';
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

/** Applies the approval annotation of `task` to the rules' `verdict`. */
export function applyApproval(
  task: Pick<v2.AITask, 'metadata' | 'status'>,
  verdict: Verdict,
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
