// Crash safety: a `pendingDecision` without `blockedBy` on the live object means an operator
// stopped between writing the decision and recording its outcome. Instead of acting again,
// the operator looks at the effect the decision names (replicas reached, pod gone, node
// still cordoned by this AITask's mark, so a node someone else cordoned is never claimed):
// done → recorded as executed; visibly not done → dropped, so the rules decide again and the
// action runs once; undecidable → recorded as unconfirmed and never repeated.
// Pure: the reconciler gathers the observation, and only of a target the AITask may read
// (its own namespace unless `--allow-cross-namespace`); one it may not is settled as
// notDone without any read, so the status never tells a tenant about another namespace.

import type * as v2 from '../../api/schema/v2.ts';
import { without, type EventSpec } from './vocabulary.ts';

/** What the operator sees now of the effect a decision names. */
export interface EffectObservation {
  /** spec.replicas of the target (undefined: the target is gone). */
  readonly replicas?: number;
  /** True while the pod named in the effect exists (same uid) and is not terminating. */
  readonly podPresent?: boolean;
  /**
   * Whether the node named in the effect is still cordoned by this AITask's mark (api/cordon.ts
   * `cordonHeldBy`); false also when it is cordoned by someone else or gone (undefined: not read).
   */
  readonly nodeCordonedByTask?: boolean;
}

/** Whether the decision's effect is in place. */
export type Verification = 'done' | 'notDone' | 'unknown';

/** True for a decision that was in flight (not one waiting for approval). */
export function isInFlight(decision: v2.DecisionRecord | undefined): decision is v2.DecisionRecord {
  return decision !== undefined && decision.blockedBy === undefined && decision.executed !== true;
}

/** Compares the decision's effect with the observation. */
export function verifyEffect(decision: v2.DecisionRecord, obs: EffectObservation): Verification {
  const e = decision.effect;
  switch (decision.action) {
    case 'Noop':
      return 'done';
    case 'ScaleUp':
    case 'ScaleDown':
      if (e?.replicas === undefined || obs.replicas === undefined) return 'unknown';
      if (obs.replicas === e.replicas) return 'done';
      return obs.replicas === e.fromReplicas ? 'notDone' : 'unknown';
    case 'RestartPod':
      if (e?.pod === undefined || obs.podPresent === undefined) return 'unknown';
      return obs.podPresent ? 'notDone' : 'done';
    case 'CordonNode':
      if (e?.node === undefined || obs.nodeCordonedByTask === undefined) return 'unknown';
      return obs.nodeCordonedByTask ? 'done' : 'notDone';
  }
}

/** The status after settling the in-flight decision of `status` as `verification` says, and its Event. */
export function settleDecision(
  status: v2.Status,
  verification: Verification,
): { status: v2.Status; events: EventSpec[] } | undefined {
  const pending = status.pendingDecision;
  if (!isInFlight(pending)) return undefined;
  const rest = without(status, 'pendingDecision');
  const counts = pending.action === 'Noop' ? 0 : 1;
  if (verification === 'notDone') {
    const note = `${pending.reason} (interrupted before it took effect; the rules decide again)`;
    return {
      status: {
        ...rest,
        lastDecision: { ...pending, reason: note, executed: false, blockedBy: 'Interrupted' },
      },
      events: [{ type: 'Warning', reason: 'DecisionInterrupted', action: pending.action, note }],
    };
  }
  const done = verification === 'done';
  const note = done
    ? `${pending.reason} (found in effect after a restart; not repeated)`
    : `${pending.reason} (interrupted; its effect cannot be verified, so it is not repeated)`;
  const node = pending.action === 'CordonNode' && done ? pending.effect?.node : undefined;
  return {
    status: {
      ...rest,
      phase: counts > 0 ? 'Healing' : (rest.phase ?? 'Monitoring'),
      lastDecision: { ...pending, reason: note, executed: done },
      lastExecutionTime: pending.at,
      attempts: (rest.attempts ?? 0) + counts,
      ...(node !== undefined ? { cordonedNodes: [...new Set([...(rest.cordonedNodes ?? []), node])] } : {}),
    },
    events: [
      {
        type: done ? 'Normal' : 'Warning',
        reason: done ? 'DecisionVerified' : 'DecisionUnverified',
        action: pending.action,
        note,
      },
    ],
  };
}
