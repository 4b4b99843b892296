// The status before an action: turns a verdict of the rules (decide.ts) into the next AITask
// status and the Events that explain it. evaluate() runs the builder of the verdict's kind;
// the builders follow in the order the rules reach them: not evaluated (paused, no target,
// no metric), evaluated (healthy, breach pending, stalled), decided (blocked, act). Pure: the
// reconciler compares the result with the current status and writes (and emits) nothing when
// they are equal. The status after the action is outcome.ts; what the builders share,
// status-parts.ts.

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, Reason, type ConditionInput } from '../../api/status/conditions.ts';
import { describePlan, type ActionPlan, type Verdict } from './decide.ts';
import {
  breached,
  decisionRecord,
  evaluation,
  frame,
  keepBreach,
  keepPhase,
  metricsRead,
  notStalled,
  sameDecision,
  targetFound,
  type Frame,
} from './status-parts.ts';
import { cond, event, type EventSpec, type Task } from './vocabulary.ts';

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
  /** The LLM call behind the decision (model, latency, tokens), when one went out. */
  readonly llm?: v2.DecisionLLMCall;
  /** The resolved target of the action (pod, node), merged with the plan's replicas. */
  readonly effect?: v2.DecisionEffect;
  /** UID of the target Deployment as observed, recorded in the decision's `target`. */
  readonly targetUID?: string;
  /** Conditions to set as well (LLMAvailable). */
  readonly conditions?: readonly ConditionInput[];
  /** Events to record as well (LLM fallbacks). */
  readonly events?: readonly EventSpec[];
  /** Id of the decision when it continues an earlier one (an approved pendingDecision). */
  readonly decisionId?: string;
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
  return build(verdict.kind, frame(task, now, intervalMs, extra), verdict, decisionId);
}

type VerdictOf<K extends Verdict['kind']> = Extract<Verdict, { kind: K }>;

/** The verdicts by kind, and for each kind the function that builds its status. */
type Verdicts = { [K in Verdict['kind']]: VerdictOf<K> };
type Builders = { [K in Verdict['kind']]: (f: Frame, v: Verdicts[K], decisionId: string) => Evaluation };

const BUILDERS: Builders = {
  paused,
  targetMissing,
  metricUnavailable,
  healthy,
  breachPending,
  stalled,
  blocked,
  act,
};

/** Runs the builder of `kind` (K ties the kind to its verdict, so each builder gets its own verdict type). */
function build<K extends Verdict['kind']>(kind: K, f: Frame, v: Verdicts[K], decisionId: string): Evaluation {
  return BUILDERS[kind](f, v, decisionId);
}

// Not evaluated: paused, no target to watch, no metric to read.

function paused(f: Frame): Evaluation {
  const msg = 'spec.paused is true: not evaluating';
  return evaluation(f, {
    phase: 'Paused',
    message: msg,
    conditions: [
      cond(ConditionType.Ready, 'False', Reason.Paused, msg),
      cond(ConditionType.Reconciling, 'False', Reason.Paused, msg),
    ],
    event: event('Normal', Reason.Paused, 'Skip', msg),
  });
}

function targetMissing(f: Frame, v: VerdictOf<'targetMissing'>): Evaluation {
  return evaluation(f, {
    phase: 'Failed',
    message: v.message,
    conditions: [
      v.reason === Reason.DuplicateTarget
        ? targetFound(f)
        : cond(ConditionType.TargetFound, 'False', v.reason, v.message),
      cond(ConditionType.Ready, 'False', v.reason, v.message),
      cond(ConditionType.Stalled, 'True', v.reason, v.message),
      cond(ConditionType.Reconciling, 'False', v.reason, v.message),
    ],
    event: event('Warning', v.reason, 'Skip', v.message),
  });
}

function metricUnavailable(f: Frame, v: VerdictOf<'metricUnavailable'>): Evaluation {
  const msg = `metric unavailable, no action: ${v.message}`;
  return evaluation(f, {
    phase: keepPhase(f, 'Monitoring'),
    message: msg,
    conditions: [
      targetFound(f),
      cond(ConditionType.MetricsAvailable, 'False', v.reason, v.message),
      cond(ConditionType.Ready, 'False', Reason.MetricsUnavailable, msg),
      notStalled(),
      cond(ConditionType.Reconciling, 'False', Reason.MetricsUnavailable, 'waiting for the metric'),
    ],
    event: event('Warning', v.reason, 'Skip', msg),
    patch: keepBreach(f),
  });
}

// Evaluated: the metric is within the threshold, in breach but not for long enough yet, or
// in breach after maxAttempts actions.

function healthy(f: Frame): Evaluation {
  const { prev, attempts, threshold } = f;
  const recovered = attempts > 0 || prev.phase === 'Healing';
  const msg = recovered
    ? `metric back within ${threshold} after ${attempts} action(s)`
    : `metric within ${threshold}`;
  const phase = recovered || prev.phase === 'Healed' ? 'Healed' : 'Monitoring';
  return evaluation(f, {
    phase,
    message: recovered || phase === 'Monitoring' ? msg : (prev.message ?? msg),
    conditions: [
      targetFound(f),
      metricsRead(),
      cond(ConditionType.Ready, 'True', Reason.Healthy, `threshold ${threshold} not breached`),
      notStalled(),
      cond(ConditionType.Reconciling, 'False', Reason.Reconciled, 'nothing to do'),
    ],
    event: event('Normal', recovered ? Reason.Remediated : Reason.Healthy, 'Evaluate', msg),
    patch: { attempts: 0 },
  });
}

function breachPending(f: Frame, v: VerdictOf<'breachPending'>): Evaluation {
  const msg = `threshold ${f.threshold} breached since ${v.since}; acting once it holds for ${f.task.spec.trigger.forSeconds ?? 0}s`;
  return evaluation(f, {
    phase: f.prev.phase === 'Healing' ? 'Healing' : 'Monitoring',
    message: msg,
    conditions: [
      targetFound(f),
      metricsRead(),
      cond(ConditionType.Ready, 'False', Reason.BreachPending, msg),
      notStalled(),
      cond(ConditionType.Reconciling, 'True', Reason.BreachPending, msg),
    ],
    event: event('Normal', Reason.BreachPending, 'Evaluate', msg),
    patch: { breachSince: v.since },
    requeueAfterMs: Math.min(f.intervalMs, v.remainingMs),
  });
}

function stalled(f: Frame, v: VerdictOf<'stalled'>): Evaluation {
  const msg = `${v.attempts} action(s) did not bring the metric back within ${f.threshold}; change the spec to retry`;
  return evaluation(f, {
    phase: 'Failed',
    message: msg,
    conditions: [
      targetFound(f),
      metricsRead(),
      cond(ConditionType.Ready, 'False', Reason.MaxAttemptsReached, msg),
      cond(ConditionType.Stalled, 'True', Reason.MaxAttemptsReached, msg),
      cond(ConditionType.Reconciling, 'False', Reason.MaxAttemptsReached, msg),
    ],
    event: event('Warning', Reason.MaxAttemptsReached, 'Skip', msg),
    patch: keepBreach(f),
  });
}

// Decided: a guardrail blocks the action, or the action runs.

function blocked(f: Frame, v: VerdictOf<'blocked'>, decisionId: string): Evaluation {
  const awaiting = v.blockedBy === 'AwaitingApproval';
  const decision = blockedDecision(f, v, decisionId);
  const note = awaiting
    ? `${v.message}: approve with kubectl aiops approve ${f.task.metadata.name ?? ''} (decision ${decision.pendingDecision?.id ?? ''})`
    : v.message;
  return evaluation(f, {
    phase: awaiting ? 'AwaitingApproval' : keepPhase(f, 'Monitoring'),
    message: note,
    conditions: [
      targetFound(f),
      metricsRead(),
      breached(f),
      cond(ConditionType.RemediationAllowed, 'False', v.blockedBy, note),
      notStalled(),
      cond(ConditionType.Reconciling, 'False', v.blockedBy, note),
    ],
    event: event(v.blockedBy === 'DryRun' || awaiting ? 'Normal' : 'Warning', v.blockedBy, 'Skip', note),
    patch: { breachSince: v.since, ...decision },
    requeueAfterMs: Math.min(f.intervalMs, v.remainingMs ?? f.intervalMs),
  });
}

/**
 * Where a blocked decision is kept: one awaiting approval in pendingDecision (the decision
 * already waiting while it is the same, so the id being approved stays valid); any other in
 * lastDecision, unless it is a cooldown or repeats the last blocked decision.
 */
function blockedDecision(f: Frame, v: VerdictOf<'blocked'>, decisionId: string): Partial<v2.Status> {
  const { prev } = f;
  const record = { ...decisionRecord(f, decisionId, v.value, v.message, v.plan), blockedBy: v.blockedBy };
  if (v.blockedBy === 'AwaitingApproval') {
    const waiting = prev.pendingDecision?.blockedBy === 'AwaitingApproval' ? prev.pendingDecision : undefined;
    return { pendingDecision: waiting !== undefined && sameDecision(waiting, record) ? waiting : record };
  }
  const same =
    prev.lastDecision?.blockedBy === v.blockedBy &&
    prev.lastDecision.action === record.action &&
    prev.lastDecision.reason === record.reason;
  return v.blockedBy === 'Cooldown' || same ? {} : { lastDecision: record };
}

function act(f: Frame, v: VerdictOf<'act'>, decisionId: string): Evaluation {
  const what = describePlan(v.plan);
  const reason = `threshold ${f.threshold} breached: ${what}`;
  const decision = decisionRecord(f, f.extra.decisionId ?? decisionId, v.value, reason, v.plan);
  const note = f.extra.note !== undefined ? ` (${f.extra.note})` : '';
  const ev = evaluation(f, {
    phase: 'Healing',
    message: `running ${what}`,
    conditions: [
      targetFound(f),
      metricsRead(),
      breached(f),
      cond(ConditionType.RemediationAllowed, 'True', Reason.Allowed, `${what} allowed`),
      notStalled(),
      cond(ConditionType.Reconciling, 'True', Reason.Remediating, `running ${what}`),
    ],
    event: event(
      'Normal',
      Reason.Breached,
      'Decide',
      `metric ${v.value} ${f.threshold}: decided ${what}${note}`,
    ),
    patch: { breachSince: v.since, pendingDecision: decision },
  });
  return { ...ev, act: { decision, plan: v.plan } };
}
