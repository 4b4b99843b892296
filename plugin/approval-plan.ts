// What `kubectl aiops approve` shows and checks before it approves: the decision waiting in
// status.pendingDecision, with the action, the target (of the kind spec.target names) as it is
// now (its UID), the pod or node, and the replicas from → to; and why approving it would be
// wrong — another decision waits than the one reviewed (`--id`), the AITask or its target
// changed since the decision was made, the target is gone or was replaced, its replicas moved. The operator
// voids an approval on the same grounds (operator/decision/approval.ts); refusing here tells
// the approver before anything is written. Pure.

import type * as v2 from '../api/schema/v2.ts';
import type { DeploymentLike, LiveTarget } from './kinds.ts';
import { builtinKind, targetNamespace, targetTypeName } from '../api/schema/target.ts';

/** Exactly what approving would make the operator do. */
export interface ApprovalPlan {
  name: string;
  namespace: string;
  id: string;
  action: string;
  /** AITask generation the decision was made from (absent: made by an operator before 22). */
  generation?: number;
  /**
   * The target the decision acts on (its apiVersion, when the spec names one, and kind as the
   * spec names them), with its UID as read now (for a kind read through /scale, the UID its
   * Scale carries: the object's own).
   */
  target: { apiVersion?: string; kind: string; namespace: string; name: string; uid?: string };
  replicas?: { from: number; to: number };
  /** The pod to evict, or whose node to cordon, or how the operator chooses it. */
  pod?: string;
  node?: string;
  reason: string;
}

/** The plan and, when approving is wrong, why (exit 3). */
export type ApprovalCheck =
  | { readonly plan: ApprovalPlan; readonly refusal?: string }
  | { readonly plan?: undefined; readonly refusal: string };

/** Live Deployment fields the check reads (`uid` included). */
export type LiveDeployment = DeploymentLike;

/** The live target the check reads, of the kind spec.target names (its Scale, for a kind other than Deployment and StatefulSet). */
export type LiveWorkload = LiveTarget['object'];

/** One line for a decision: "ScaleUp 2 → 3", "CordonNode". */
export function decisionSummary(d: v2.DecisionRecord): string {
  const e = d.effect;
  return e?.replicas !== undefined && e.fromReplicas !== undefined
    ? `${d.action} ${e.fromReplicas} → ${e.replicas}`
    : d.action;
}

/** The pod and node the decision names, or how the operator picks them when it executes. */
function podAndNode(d: v2.DecisionRecord, ref: string): Pick<ApprovalPlan, 'pod' | 'node'> {
  const e = d.effect ?? {};
  if (d.action === 'RestartPod')
    return { pod: e.pod ?? `an unhealthy pod of ${ref}, chosen when the operator executes` };
  if (d.action === 'CordonNode')
    return {
      node: e.node ?? `the node of the worst pod of ${ref}, chosen when the operator executes`,
      ...(e.pod !== undefined ? { pod: e.pod } : {}),
    };
  return {};
}

/**
 * Checks the decision waiting on `task` against `live` (its target as read now, of the kind
 * spec.target.kind names; undefined when absent); `wanted` is the id the approver reviewed.
 */
export function checkApproval(
  task: v2.AITask,
  live: LiveWorkload | undefined,
  wanted: string | undefined,
): ApprovalCheck {
  const name = task.metadata.name ?? '';
  const namespace = task.metadata.namespace ?? '';
  const pending = task.status?.pendingDecision;
  if (pending?.blockedBy !== 'AwaitingApproval')
    return {
      refusal: `aitask "${name}" in namespace "${namespace}" has no decision waiting for approval (phase ${task.status?.phase ?? 'Pending'}); nothing to approve`,
    };
  const specTarget = {
    namespace: targetNamespace(task),
    name: task.spec.target.name,
  };
  const { apiVersion, kind } = task.spec.target;
  const made = pending.target ?? specTarget;
  const ref = `${targetTypeName(task.spec.target)} ${made.namespace}/${made.name}`;
  const uid = live?.metadata?.uid;
  const e = pending.effect;
  const plan: ApprovalPlan = {
    name,
    namespace,
    id: pending.id,
    action: pending.action,
    ...(pending.generation !== undefined ? { generation: pending.generation } : {}),
    target: {
      ...(apiVersion !== undefined ? { apiVersion } : {}),
      kind,
      namespace: made.namespace,
      name: made.name,
      ...(uid !== undefined ? { uid } : {}),
    },
    ...(e?.fromReplicas !== undefined && e.replicas !== undefined
      ? { replicas: { from: e.fromReplicas, to: e.replicas } }
      : {}),
    ...podAndNode(pending, ref),
    reason: pending.reason,
  };
  const again = `the operator makes the decision again: run kubectl aiops approve ${name} -n ${namespace} to see the new one`;
  const refuse = (why: string): ApprovalCheck => ({ plan, refusal: why });
  if (wanted !== undefined && wanted !== pending.id)
    return refuse(
      `the decision waiting on aitask "${name}" is ${pending.id} (${decisionSummary(pending)}), not ${wanted}; check it with: kubectl aiops approve ${name} -n ${namespace}`,
    );
  if (pending.generation === undefined || pending.target === undefined)
    return refuse(
      `decision ${pending.id} records no generation or target to bind an approval to (made by an older operator); ${again}`,
    );
  if (made.namespace !== specTarget.namespace || made.name !== specTarget.name)
    return refuse(
      `the target of aitask "${name}" changed from ${ref} to ${specTarget.namespace}/${specTarget.name} since decision ${pending.id} was made; ${again}`,
    );
  const generation = task.metadata.generation ?? 0;
  if (pending.generation !== generation)
    return refuse(
      `aitask "${name}" changed from generation ${pending.generation} to ${generation} since decision ${pending.id} was made; ${again}`,
    );
  if (live === undefined)
    return refuse(`${ref} does not exist; decision ${pending.id} has nothing to act on`);
  const madeUID = pending.target.uid;
  if (madeUID !== undefined && uid !== madeUID)
    return refuse(
      `${ref} was replaced since decision ${pending.id} was made (UID ${madeUID} → ${uid ?? 'none'}); ${again}`,
    );
  // A Deployment or StatefulSet defaults spec.replicas to 1; a Scale omits 0.
  const replicas = live.spec?.replicas ?? (builtinKind(task.spec.target) === undefined ? 0 : 1);
  if (plan.replicas !== undefined && plan.replicas.from !== replicas)
    return refuse(
      `${ref} has ${replicas} replicas now, decision ${pending.id} scales from ${plan.replicas.from}; ${again}`,
    );
  return { plan };
}
