// The status after an action ran: the pending decision becomes lastDecision, marked
// executed (attempts, lastExecutionTime, cordoned node) or blocked by the reason the action
// adapter gave. Pure, like evaluate.ts, which builds the status before the action.
//
// An executed action starts a cooldown, and the metric it acted on was in breach: the next
// evaluation of the same observations would say only that the task cools down. So the
// outcome's status already says it, and its Events include the Cooldown one (withCooldown);
// that evaluation, an interval later with nothing changed but the time, computes the status
// as written and writes nothing: a remediation cycle costs two status writes, not three.

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, Reason, metaTime } from '../../api/status/conditions.ts';
import {
  decide,
  type ActionPlan,
  type Defaults,
  type MetricObservation,
  type TargetObservation,
} from './decide.ts';
import { evaluate } from './evaluate.ts';
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

/** What the outcome's evaluation observed: the target and the metric the decision was made on. */
export interface Observed {
  readonly target: TargetObservation;
  readonly metric: MetricObservation | undefined;
}

/**
 * `after` (recordOutcome's answer for `task`) with the status the evaluation of `observed`
 * at `now` gives when it is a cooldown (RemediationAllowed False, reason Cooldown): the
 * status the next evaluation computes while the metric stays in breach, so it writes
 * nothing. The decision record, attempts and lastExecutionTime are the outcome's; the
 * Events are the outcome's, then the cooldown's (the Event that evaluation would have
 * recorded). Any other verdict (the last attempt made: stalled next) leaves `after` as it
 * is. Pure.
 */
export function withCooldown(
  task: Task,
  after: { status: v2.Status; events: EventSpec[] },
  observed: Observed,
  now: number,
  defaults: Defaults,
  intervalMs: number,
): { status: v2.Status; events: EventSpec[] } {
  const next = { ...task, status: after.status };
  const verdict = decide(next, observed.target, observed.metric, now, defaults);
  if (verdict.kind !== 'blocked' || verdict.blockedBy !== 'Cooldown') return after;
  const cooling = evaluate(next, verdict, now, '', intervalMs);
  return { status: cooling.status, events: [...after.events, ...cooling.events] };
}
