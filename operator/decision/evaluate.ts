// Turns a verdict of the rules (decide.ts) and an action's outcome into the next AITask
// status and the Events that explain it. Pure: the reconciler compares the result with the
// current status and writes (and emits) nothing when they are equal.

import type * as v2 from '../../api/schema/v2.ts';
import {
  ConditionType,
  Reason,
  metaTime,
  removeCondition,
  type ConditionInput,
} from '../../api/status/conditions.ts';
import { currentAttempts, describePlan, type ActionPlan, type Verdict } from './decide.ts';
import { cond, event, planEffect, withConditions, without, type EventSpec, type Task } from './vocabulary.ts';

/** What one evaluation leads to. */
export interface Evaluation {
  /** Status to write (before the action, if any: it carries `pendingDecision`). */
  readonly status: v2.Status;
  readonly events: EventSpec[];
  readonly act?: { readonly decision: v2.DecisionRecord; readonly plan: ActionPlan };
  /** Milliseconds until the next evaluation. */
  readonly requeueAfterMs: number;
}

/** What the reconciler adds to an evaluation: the decision's source and resolved effect, the LLM's account. */
export interface EvaluationExtra {
  /** Who decided (default rules). */
  readonly source?: 'rules' | 'llm';
  /** Appended to the decision's reason (the LLM's advice, or why the rules decided alone). */
  readonly note?: string;
  /** The resolved target of the action (pod, node), merged with the plan's replicas. */
  readonly effect?: v2.DecisionEffect;
  /** Conditions to set as well (LLMAvailable). */
  readonly conditions?: readonly ConditionInput[];
  /** Events to record as well (LLM fallbacks). */
  readonly events?: readonly EventSpec[];
  /** Id of the decision when it continues an earlier one (an approved pendingDecision). */
  readonly decisionId?: string;
}

const HEALING_PHASES: ReadonlySet<string> = new Set(['Monitoring', 'Healing', 'Healed']);

function targetLabel(task: Task): string {
  const ns = task.spec.target.namespace ?? task.metadata.namespace ?? '';
  return `Deployment ${ns}/${task.spec.target.name}`;
}

function thresholdLabel(task: Task): string {
  const op = (task.spec.trigger.operator ?? 'GreaterThan') === 'LessThan' ? '<' : '>';
  return `${op} ${task.spec.trigger.threshold}`;
}

function decisionRecord(
  task: Task,
  id: string,
  value: number,
  reason: string,
  at: string,
  plan?: ActionPlan,
  extra: EvaluationExtra = {},
): v2.DecisionRecord {
  const effect = { ...(plan ? planEffect(plan) : {}), ...extra.effect };
  return {
    id,
    action: plan?.action ?? task.spec.remediation.action,
    source: extra.source ?? 'rules',
    reason: extra.note !== undefined ? `${reason}; ${extra.note}` : reason,
    metricValue: value,
    threshold: task.spec.trigger.threshold,
    executed: false,
    at,
    ...(Object.keys(effect).length > 0 ? { effect } : {}),
  };
}

/** The same decision for approval purposes: action and effect agree. */
function sameDecision(a: v2.DecisionRecord | undefined, b: v2.DecisionRecord): boolean {
  return (
    a !== undefined &&
    a.action === b.action &&
    a.effect?.replicas === b.effect?.replicas &&
    a.effect?.fromReplicas === b.effect?.fromReplicas
  );
}

/** Evaluates one verdict into the next status (pure; `now` in ms, `decisionId` for a new decision). */
export function evaluate(
  task: Task,
  verdict: Verdict,
  now: number,
  decisionId: string,
  intervalMs: number,
  extra: EvaluationExtra = {},
): Evaluation {
  const generation = task.metadata.generation ?? 0;
  const llmMode = task.spec.decision?.mode === 'LLM';
  const prev = llmMode
    ? (task.status ?? {})
    : { ...task.status, conditions: removeCondition(task.status?.conditions, ConditionType.LLMAvailable) };
  const t = metaTime(new Date(now));
  const attempts = currentAttempts(task);
  const base = without(prev, 'pendingDecision', 'breachSince');
  const keepPhase = (fallback: v2.Phase): v2.Phase =>
    prev.phase !== undefined && HEALING_PHASES.has(prev.phase) ? prev.phase : fallback;
  const found = cond(ConditionType.TargetFound, 'True', Reason.TargetFound, `${targetLabel(task)} found`);
  const metricsOk = cond(
    ConditionType.MetricsAvailable,
    'True',
    Reason.MetricsRead,
    'the query returns a sample',
  );
  const notStalled = cond(ConditionType.Stalled, 'False', Reason.Progressing, 'no user action needed');
  const threshold = thresholdLabel(task);
  const result = (
    phase: v2.Phase,
    message: string,
    inputs: ConditionInput[],
    ev: EventSpec,
    patch: Partial<v2.Status> = {},
    requeueAfterMs = intervalMs,
  ): Evaluation => ({
    status: withConditions(
      { ...base, phase, message, observedGeneration: generation, attempts, ...patch },
      [...inputs, ...(extra.conditions ?? [])],
      generation,
      t,
    ),
    events: [...(extra.events ?? []), ev],
    requeueAfterMs,
  });
  const keepBreach = prev.breachSince !== undefined ? { breachSince: prev.breachSince } : {};

  switch (verdict.kind) {
    case 'paused': {
      const msg = 'spec.paused is true: not evaluating';
      return result(
        'Paused',
        msg,
        [
          cond(ConditionType.Ready, 'False', Reason.Paused, msg),
          cond(ConditionType.Reconciling, 'False', Reason.Paused, msg),
        ],
        event('Normal', Reason.Paused, 'Skip', msg),
      );
    }
    case 'targetMissing':
      return result(
        'Failed',
        verdict.message,
        [
          verdict.reason === Reason.DuplicateTarget
            ? found
            : cond(ConditionType.TargetFound, 'False', verdict.reason, verdict.message),
          cond(ConditionType.Ready, 'False', verdict.reason, verdict.message),
          cond(ConditionType.Stalled, 'True', verdict.reason, verdict.message),
          cond(ConditionType.Reconciling, 'False', verdict.reason, verdict.message),
        ],
        event('Warning', verdict.reason, 'Skip', verdict.message),
      );
    case 'metricUnavailable': {
      const msg = `metric unavailable, no action: ${verdict.message}`;
      return result(
        keepPhase('Monitoring'),
        msg,
        [
          found,
          cond(ConditionType.MetricsAvailable, 'False', verdict.reason, verdict.message),
          cond(ConditionType.Ready, 'False', Reason.MetricsUnavailable, msg),
          notStalled,
          cond(ConditionType.Reconciling, 'False', Reason.MetricsUnavailable, 'waiting for the metric'),
        ],
        event('Warning', verdict.reason, 'Skip', msg),
        keepBreach,
      );
    }
    case 'healthy': {
      const recovered = attempts > 0 || prev.phase === 'Healing';
      const msg = recovered
        ? `metric back within ${threshold} after ${attempts} action(s)`
        : `metric within ${threshold}`;
      const phase = recovered || prev.phase === 'Healed' ? 'Healed' : 'Monitoring';
      return result(
        phase,
        recovered || phase === 'Monitoring' ? msg : (prev.message ?? msg),
        [
          found,
          metricsOk,
          cond(ConditionType.Ready, 'True', Reason.Healthy, `threshold ${threshold} not breached`),
          notStalled,
          cond(ConditionType.Reconciling, 'False', Reason.Reconciled, 'nothing to do'),
        ],
        event('Normal', recovered ? Reason.Remediated : Reason.Healthy, 'Evaluate', msg),
        { attempts: 0 },
      );
    }
    case 'breachPending': {
      const msg = `threshold ${threshold} breached since ${verdict.since}; acting once it holds for ${task.spec.trigger.forSeconds ?? 0}s`;
      return result(
        prev.phase === 'Healing' ? 'Healing' : 'Monitoring',
        msg,
        [
          found,
          metricsOk,
          cond(ConditionType.Ready, 'False', Reason.BreachPending, msg),
          notStalled,
          cond(ConditionType.Reconciling, 'True', Reason.BreachPending, msg),
        ],
        event('Normal', Reason.BreachPending, 'Evaluate', msg),
        { breachSince: verdict.since },
        Math.min(intervalMs, verdict.remainingMs),
      );
    }
    case 'stalled': {
      const msg = `${verdict.attempts} action(s) did not bring the metric back within ${threshold}; change the spec to retry`;
      return result(
        'Failed',
        msg,
        [
          found,
          metricsOk,
          cond(ConditionType.Ready, 'False', Reason.MaxAttemptsReached, msg),
          cond(ConditionType.Stalled, 'True', Reason.MaxAttemptsReached, msg),
          cond(ConditionType.Reconciling, 'False', Reason.MaxAttemptsReached, msg),
        ],
        event('Warning', Reason.MaxAttemptsReached, 'Skip', msg),
        keepBreach,
      );
    }
    case 'blocked': {
      const record = {
        ...decisionRecord(task, decisionId, verdict.value, verdict.message, t, verdict.plan, extra),
        blockedBy: verdict.blockedBy,
      };
      const awaiting = verdict.blockedBy === 'AwaitingApproval';
      const waiting =
        prev.pendingDecision?.blockedBy === 'AwaitingApproval' ? prev.pendingDecision : undefined;
      const same =
        prev.lastDecision?.blockedBy === verdict.blockedBy &&
        prev.lastDecision.action === record.action &&
        prev.lastDecision.reason === record.reason;
      const keep = verdict.blockedBy === 'Cooldown' || same;
      const decisionPatch: Partial<v2.Status> = awaiting
        ? { pendingDecision: waiting !== undefined && sameDecision(waiting, record) ? waiting : record }
        : keep
          ? {}
          : { lastDecision: record };
      const phase = awaiting ? 'AwaitingApproval' : keepPhase('Monitoring');
      const note = awaiting
        ? `${verdict.message}: approve with kubectl aiops approve ${task.metadata.name ?? ''} (decision ${decisionPatch.pendingDecision?.id ?? ''})`
        : verdict.message;
      return result(
        phase,
        note,
        [
          found,
          metricsOk,
          cond(ConditionType.Ready, 'False', Reason.Breached, `threshold ${threshold} breached`),
          cond(ConditionType.RemediationAllowed, 'False', verdict.blockedBy, note),
          notStalled,
          cond(ConditionType.Reconciling, 'False', verdict.blockedBy, note),
        ],
        event(
          verdict.blockedBy === 'DryRun' || awaiting ? 'Normal' : 'Warning',
          verdict.blockedBy,
          'Skip',
          note,
        ),
        { breachSince: verdict.since, ...decisionPatch },
        Math.min(intervalMs, verdict.remainingMs ?? intervalMs),
      );
    }
    case 'act': {
      const what = describePlan(verdict.plan);
      const decision = decisionRecord(
        task,
        extra.decisionId ?? decisionId,
        verdict.value,
        `threshold ${threshold} breached: ${what}`,
        t,
        verdict.plan,
        extra,
      );
      const ev = result(
        'Healing',
        `running ${what}`,
        [
          found,
          metricsOk,
          cond(ConditionType.Ready, 'False', Reason.Breached, `threshold ${threshold} breached`),
          cond(ConditionType.RemediationAllowed, 'True', Reason.Allowed, `${what} allowed`),
          notStalled,
          cond(ConditionType.Reconciling, 'True', Reason.Remediating, `running ${what}`),
        ],
        event(
          'Normal',
          Reason.Breached,
          'Decide',
          `metric ${verdict.value} ${threshold}: decided ${what}${extra.note !== undefined ? ` (${extra.note})` : ''}`,
        ),
        {
          breachSince: verdict.since,
          pendingDecision: decision,
        },
      );
      return { ...ev, act: { decision, plan: verdict.plan } };
    }
  }
}
