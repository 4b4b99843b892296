// Where the LLM advisor meets the rules (pure): the redacted context for a decision the rules
// want to take, and how the advisor's result shapes it — advice naming the configured action
// or Noop is followed and marked `source: llm`; any failure leaves the rules' decision as it
// is, sets LLMAvailable=False with the failure's reason and records a Warning Event. Either
// way a call that went out is recorded in the decision (model, latency, tokens).

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, Reason } from '../../api/status/conditions.ts';
import type { AdviceResult } from './advisor.ts';
import { currentAttempts, type ActionPlan, type Defaults } from '../decision/decide.ts';
import type { Workload } from '../runtime/kinds.ts';
import { allowedActions, countReasons, type AdviceContext } from './protocol.ts';
import type { EvaluationExtra } from '../decision/evaluate.ts';

/** The context sent to the LLM: numbers and Event reasons only. */
export function adviceContext(
  task: Pick<v2.AITask, 'metadata' | 'spec' | 'status'>,
  value: number,
  since: string,
  target: Workload,
  eventReasons: readonly string[],
  now: number,
  defaults: Defaults,
): AdviceContext {
  return {
    allowedActions: allowedActions(task.spec),
    metric: {
      value,
      threshold: task.spec.trigger.threshold,
      operator: task.spec.trigger.operator ?? 'GreaterThan',
      breachSeconds: Math.max(0, Math.round((now - Date.parse(since)) / 1000)),
    },
    target: {
      kind: task.spec.target.kind,
      replicas: target.spec?.replicas ?? 1,
      readyReplicas: target.status?.readyReplicas ?? 0,
      availableReplicas: target.status?.availableReplicas ?? 0,
    },
    attempts: currentAttempts(task),
    maxAttempts: task.spec.remediation.maxAttempts ?? defaults.maxAttempts,
    recentEventReasons: countReasons(eventReasons),
  };
}

/** The plan to run and what the evaluation records, given the advisor's result. */
export function applyAdvice(
  plan: ActionPlan,
  result: AdviceResult,
): { plan: ActionPlan; extra: EvaluationExtra } {
  if (result.kind === 'advice') {
    const { action, confidence, reason } = result.advice;
    const note = `LLM advice ${action} (confidence ${confidence}): ${reason}`;
    return {
      plan: action === 'Noop' ? { action: 'Noop' } : plan,
      extra: {
        source: 'llm',
        note,
        ...(result.call !== undefined ? { llm: result.call } : {}),
        conditions: [
          { type: ConditionType.LLMAvailable, status: 'True', reason: Reason.LLMAdvice, message: note },
        ],
      },
    };
  }
  const message = `${result.message}; the rules decide`;
  return {
    plan,
    extra: {
      source: 'rules',
      note: `LLM unavailable (${result.reason})`,
      ...(result.call !== undefined ? { llm: result.call } : {}),
      conditions: [{ type: ConditionType.LLMAvailable, status: 'False', reason: result.reason, message }],
      events: [{ type: 'Warning', reason: result.reason, action: 'Advise', note: message }],
    },
  };
}
