// What every status builder of evaluate.ts shares: the frame it reads (the task, the status
// it starts from, this evaluation's givens), how a builder's part becomes the evaluation,
// the conditions several builders set, and the decision record as status keeps it (with the
// test approval.ts uses to tell whether an approved decision is still the one decided).
// Pure.

import { targetNamespace, targetRef } from '../../api/schema/target.ts';
import type * as v2 from '../../api/schema/v2.ts';
import {
  ConditionType,
  Reason,
  metaTime,
  removeCondition,
  type ConditionInput,
} from '../../api/status/conditions.ts';
import { currentAttempts, type ActionPlan } from './decide.ts';
import type { Evaluation, EvaluationExtra } from './evaluate.ts';
import { cond, planEffect, withConditions, without, type EventSpec, type Task } from './vocabulary.ts';

/** What every builder reads: the task, the status it starts from, and this evaluation's givens. */
export interface Frame {
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

/** The frame of one evaluation of `task` at `now` (ms). */
export function frame(task: Task, now: number, intervalMs: number, extra: EvaluationExtra): Frame {
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

/** One builder's part of the next status. */
export interface Next {
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
export function evaluation(f: Frame, next: Next): Evaluation {
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

/** The phases a task keeps while it watches or heals. */
const HEALING_PHASES: ReadonlySet<string> = new Set(['Monitoring', 'Healing', 'Healed']);

/** The current phase while it is one of watching or healing, else `fallback`. */
export function keepPhase(f: Frame, fallback: v2.Phase): v2.Phase {
  return f.prev.phase !== undefined && HEALING_PHASES.has(f.prev.phase) ? f.prev.phase : fallback;
}

/** breachSince as it is, for verdicts that neither start nor end a breach. */
export function keepBreach(f: Frame): Partial<v2.Status> {
  return f.prev.breachSince !== undefined ? { breachSince: f.prev.breachSince } : {};
}

/** TargetFound=True, naming the target. */
export function targetFound(f: Frame): ConditionInput {
  return cond(ConditionType.TargetFound, 'True', Reason.TargetFound, `${targetRef(f.task)} found`);
}

/** MetricsAvailable=True: the query returned a sample. */
export function metricsRead(): ConditionInput {
  return cond(ConditionType.MetricsAvailable, 'True', Reason.MetricsRead, 'the query returns a sample');
}

/** Stalled=False: nothing waits on the user. */
export function notStalled(): ConditionInput {
  return cond(ConditionType.Stalled, 'False', Reason.Progressing, 'no user action needed');
}

/** Ready=False: the threshold is breached. */
export function breached(f: Frame): ConditionInput {
  return cond(ConditionType.Ready, 'False', Reason.Breached, `threshold ${f.threshold} breached`);
}

/** The trigger for humans: "> 0.8". */
function thresholdLabel(task: Task): string {
  const op = (task.spec.trigger.operator ?? 'GreaterThan') === 'LessThan' ? '<' : '>';
  return `${op} ${task.spec.trigger.threshold}`;
}

/** The decision as recorded in status; the reconciler's extra names its source, note and effect. */
export function decisionRecord(
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

/** The target `task` names now, with its UID when observed. */
export function decisionTarget(task: Task, uid?: string): NonNullable<v2.DecisionRecord['target']> {
  return {
    namespace: targetNamespace(task),
    name: task.spec.target.name,
    ...(uid !== undefined ? { uid } : {}),
  };
}

/**
 * The same decision for approval purposes: made from the same generation, against the same
 * target (same UID when both know it), with the same action and effect (replicas, pod,
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
