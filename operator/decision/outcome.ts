// The status after an action ran: the pending decision becomes lastDecision, marked
// executed (attempts, lastExecutionTime, cordoned node) or blocked by the reason the action
// adapter gave. Pure, like evaluate.ts, which builds the status before the action.

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, Reason, metaTime } from '../../api/status/conditions.ts';
import type { ActionPlan } from './decide.ts';
import {
  cond,
  event,
  withConditions,
  without,
  type ActionOutcome,
  type EventSpec,
  type Task,
} from './vocabulary.ts';

/** The status after the action ran (pure): the decision moves to lastDecision, marked executed or blocked. */
export function recordOutcome(
  task: Task,
  status: v2.Status,
  decision: v2.DecisionRecord,
  plan: ActionPlan,
  outcome: ActionOutcome,
  now: number,
): { status: v2.Status; events: EventSpec[] } {
  const generation = task.metadata.generation ?? 0;
  const t = metaTime(new Date(now));
  const rest = without(status, 'pendingDecision');
  if (outcome.executed) {
    const noop = plan.action === 'Noop';
    const next: v2.Status = {
      ...rest,
      phase: noop ? 'Monitoring' : 'Healing',
      message: outcome.message,
      lastDecision: { ...decision, executed: true },
      lastExecutionTime: t,
      attempts: (rest.attempts ?? 0) + (noop ? 0 : 1),
      ...(outcome.cordoned !== undefined
        ? { cordonedNodes: [...new Set([...(rest.cordonedNodes ?? []), outcome.cordoned])] }
        : {}),
    };
    const reconciling = noop
      ? cond(ConditionType.Reconciling, 'False', Reason.Reconciled, outcome.message)
      : cond(
          ConditionType.Reconciling,
          'True',
          Reason.Remediating,
          `${outcome.message}; waiting for the metric to recover`,
        );
    return {
      status: withConditions(next, [reconciling], generation, t),
      events: [event('Normal', plan.action, plan.action, outcome.message)],
    };
  }
  const next: v2.Status = {
    ...rest,
    phase: (rest.attempts ?? 0) > 0 ? 'Healing' : 'Monitoring',
    message: outcome.message,
    lastDecision: { ...decision, executed: false, blockedBy: outcome.blockedBy },
  };
  return {
    status: withConditions(
      next,
      [
        cond(ConditionType.RemediationAllowed, 'False', outcome.blockedBy, outcome.message),
        cond(ConditionType.Reconciling, 'False', outcome.blockedBy, outcome.message),
      ],
      generation,
      t,
    ),
    events: [event('Warning', outcome.blockedBy, plan.action, outcome.message)],
  };
}
