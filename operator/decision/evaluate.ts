// The status before an action: turns a verdict of the rules (decide.ts) into the next AITask
// status and the Events that explain it. evaluate() runs the builder of the verdict's kind;
// the builders follow in the order the rules reach them: not evaluated (paused, no target,
// no metric), evaluated (healthy, breach pending, stalled), decided (blocked, act). Pure: the
// reconciler compares the result with the current status and writes (and emits) nothing when
// they are equal. The status after the action is outcome.ts.

import { targetKey, targetNamespace } from '../../api/schema/target.ts';
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

/** What every builder reads: the task, the status it starts from, and this evaluation's givens. */
interface Frame {
  readonly task: Task;
  /** The current status; outside LLM mode without a stale LLMAvailable condition. */
  readonly prev: v2.Status;
  readonly generation: number;
  /** `now` as a metav1.Time. */
  readonly at: string;
  readonly attempts: number;
  /** The trigger for humans: "> 0.8". */
  readonly threshold: string;
  readonly intervalMs: number;
  readonly extra: EvaluationExtra;
}

function frame(task: Task, now: number, intervalMs: number, extra: EvaluationExtra): Frame {
  const llmMode = task.spec.decision?.mode === 'LLM';
  return {
    task,
    prev: llmMode
      ? (task.status ?? {})
      : {
          ...task.status,
          conditions: removeCondition(task.status?.conditions, ConditionType.LLMAvailable),
        },
    generation: task.metadata.generation ?? 0,
    at: metaTime(new Date(now)),
    attempts: currentAttempts(task),
    threshold: thresholdLabel(task),
    intervalMs,
    extra,
  };
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

// What the builders share.

/** One builder's part of the next status. */
interface Next {
  readonly phase: v2.Phase;
  readonly message: string;
  readonly conditions: ConditionInput[];
  readonly event: EventSpec;
  /** Fields set on top (the decision, breachSince, attempts). */
  readonly patch?: Partial<v2.Status>;
  /** Default: the task's interval. */
  readonly requeueAfterMs?: number;
}

/**
 * The evaluation: the previous status without the fields each evaluation decides afresh
 * (pendingDecision, breachSince), the builder's part, and the reconciler's extra conditions
 * and Events, every condition stamped with the generation.
 */
function evaluation(f: Frame, next: Next): Evaluation {
  const { generation, attempts, extra } = f;
  const base = without(f.prev, 'pendingDecision', 'breachSince');
  return {
    status: withConditions(
      {
        ...base,
        phase: next.phase,
        message: next.message,
        observedGeneration: generation,
        attempts,
        ...next.patch,
      },
      [...next.conditions, ...(extra.conditions ?? [])],
      generation,
      f.at,
    ),
    events: [...(extra.events ?? []), next.event],
    requeueAfterMs: next.requeueAfterMs ?? f.intervalMs,
  };
}

const HEALING_PHASES: ReadonlySet<string> = new Set(['Monitoring', 'Healing', 'Healed']);

/** The current phase while it is one of watching or healing, else `fallback`. */
function keepPhase(f: Frame, fallback: v2.Phase): v2.Phase {
  return f.prev.phase !== undefined && HEALING_PHASES.has(f.prev.phase) ? f.prev.phase : fallback;
}

/** breachSince as it is, for verdicts that neither start nor end a breach. */
function keepBreach(f: Frame): Partial<v2.Status> {
  return f.prev.breachSince !== undefined ? { breachSince: f.prev.breachSince } : {};
}

function targetFound(f: Frame): ConditionInput {
  return cond(ConditionType.TargetFound, 'True', Reason.TargetFound, `${targetLabel(f.task)} found`);
}

function metricsRead(): ConditionInput {
  return cond(ConditionType.MetricsAvailable, 'True', Reason.MetricsRead, 'the query returns a sample');
}

function notStalled(): ConditionInput {
  return cond(ConditionType.Stalled, 'False', Reason.Progressing, 'no user action needed');
}

function breached(f: Frame): ConditionInput {
  return cond(ConditionType.Ready, 'False', Reason.Breached, `threshold ${f.threshold} breached`);
}

function targetLabel(task: Task): string {
  return `Deployment ${targetKey(task)}`;
}

function thresholdLabel(task: Task): string {
  const op = (task.spec.trigger.operator ?? 'GreaterThan') === 'LessThan' ? '<' : '>';
  return `${op} ${task.spec.trigger.threshold}`;
}

/** The decision as recorded in status; the reconciler's extra names its source, note and effect. */
function decisionRecord(
  f: Frame,
  id: string,
  value: number,
  reason: string,
  plan?: ActionPlan,
): v2.DecisionRecord {
  const { task, extra } = f;
  const effect = { ...(plan ? planEffect(plan) : {}), ...extra.effect };
  return {
    id,
    action: plan?.action ?? task.spec.remediation.action,
    source: extra.source ?? 'rules',
    reason: extra.note !== undefined ? `${reason}; ${extra.note}` : reason,
    metricValue: value,
    threshold: task.spec.trigger.threshold,
    executed: false,
    at: f.at,
    generation: f.generation,
    target: decisionTarget(task, extra.targetUID),
    ...(extra.llm !== undefined ? { llm: extra.llm } : {}),
    ...(Object.keys(effect).length > 0 ? { effect } : {}),
  };
}

/** The Deployment `task` names now, with its UID when observed. */
export function decisionTarget(task: Task, uid?: string): NonNullable<v2.DecisionRecord['target']> {
  return {
    namespace: targetNamespace(task),
    name: task.spec.target.name,
    ...(uid !== undefined ? { uid } : {}),
  };
}

/**
 * The same decision for approval purposes: made from the same generation, against the same
 * Deployment (same UID when both know it), with the same action and effect (replicas, pod,
 * node). A decision recorded without generation or target (before they were recorded) is
 * never the same, so its id stops being approvable.
 */
export function sameDecision(a: v2.DecisionRecord | undefined, b: v2.DecisionRecord): boolean {
  const uidA = a?.target?.uid;
  const uidB = b.target?.uid;
  return (
    a !== undefined &&
    a.generation !== undefined &&
    a.generation === b.generation &&
    a.target !== undefined &&
    a.target.namespace === b.target?.namespace &&
    a.target.name === b.target.name &&
    (uidA === undefined || uidB === undefined || uidA === uidB) &&
    a.action === b.action &&
    a.effect?.replicas === b.effect?.replicas &&
    a.effect?.fromReplicas === b.effect?.fromReplicas &&
    a.effect?.pod === b.effect?.pod &&
    a.effect?.podUID === b.effect?.podUID &&
    a.effect?.node === b.effect?.node
  );
}
