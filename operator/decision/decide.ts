// The rules engine: from an AITask's spec and status and what the operator observed
// (target, metric, clock) to a verdict — healthy, breach still pending, act, or which
// guardrail blocks acting. Pure: no I/O, the clock is a parameter.

import type * as v2 from '../../api/schema/v2.ts';
import { metaTime } from '../../api/status/conditions.ts';

/** Operator-wide defaults for fields the AITask leaves out. */
export interface Defaults {
  /** Seconds between evaluations (default 60). */
  readonly intervalSeconds: number;
  /** Seconds after an action before the next (default 300). */
  readonly cooldownSeconds: number;
  /** Actions without recovery before Failed (default 3). */
  readonly maxAttempts: number;
  /** Scale bounds when `remediation.scale` omits them (defaults 1 and 10). */
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** The defaults the operator starts with unless flags say otherwise. */
export const DEFAULTS: Defaults = {
  intervalSeconds: 60,
  cooldownSeconds: 300,
  maxAttempts: 3,
  minReplicas: 1,
  maxReplicas: 10,
};

/** What the operator found for the target Deployment. */
export type TargetObservation =
  | { readonly found: true; readonly replicas: number }
  | {
      readonly found: false;
      readonly reason:
        'TargetNotFound' | 'TargetRefused' | 'TargetInvalid' | 'CrossNamespaceRefused' | 'DuplicateTarget';
      readonly message: string;
    };

/** The metric read, or why it could not be read. */
export type MetricObservation =
  | {
      readonly ok: true;
      readonly value: number;
      /** The sample's `pod` label, when it names one (a valid pod name): the pod a RestartPod or CordonNode takes first. */
      readonly pod?: string;
    }
  | {
      readonly ok: false;
      readonly reason:
        | 'MetricsUnavailable'
        | 'NoData'
        | 'QueryFailed'
        | 'QueryRefused'
        | 'QueryTooExpensive'
        | 'PrometheusNotConfigured';
      readonly message: string;
    };

/** What the action adapter must do. */
export type ActionPlan =
  | { readonly action: 'ScaleUp' | 'ScaleDown'; readonly from: number; readonly replicas: number }
  | {
      readonly action: 'RestartPod' | 'CordonNode';
      /** The pod the metric names, taken first when it is one of the target's own (edges/actions.ts prepare). */
      readonly pod?: string;
    }
  | { readonly action: 'Noop' };

/** Guardrails that can stop an action. */
export type BlockReason =
  | 'Cooldown'
  | 'DryRun'
  | 'AwaitingApproval'
  | 'AtMaxReplicas'
  | 'AtMinReplicas'
  | 'PodDisruptionBudget'
  | 'NoPodToRestart'
  | 'ActionFailed'
  | 'ConcurrencyCapReached'
  | 'CordonCapReached'
  | 'NodeAlreadyCordoned';

/** The outcome of the rules. */
export type Verdict =
  | { readonly kind: 'paused' }
  | {
      readonly kind: 'targetMissing';
      readonly reason: Extract<TargetObservation, { found: false }>['reason'];
      readonly message: string;
    }
  | {
      readonly kind: 'metricUnavailable';
      readonly reason: Extract<MetricObservation, { ok: false }>['reason'];
      readonly message: string;
    }
  | { readonly kind: 'healthy'; readonly value: number }
  | {
      readonly kind: 'breachPending';
      readonly value: number;
      readonly since: string;
      readonly remainingMs: number;
    }
  | { readonly kind: 'stalled'; readonly value: number; readonly attempts: number }
  | {
      readonly kind: 'blocked';
      readonly value: number;
      readonly since: string;
      readonly blockedBy: BlockReason;
      readonly message: string;
      readonly remainingMs?: number;
      /** The action the guardrail stopped, when one was planned (DryRun, AwaitingApproval, caps). */
      readonly plan?: ActionPlan;
    }
  | { readonly kind: 'act'; readonly value: number; readonly since: string; readonly plan: ActionPlan };

/** True when `value` is in breach of the trigger (operator default GreaterThan). */
export function isBreach(trigger: v2.Spec['trigger'], value: number): boolean {
  return (trigger.operator ?? 'GreaterThan') === 'LessThan'
    ? value < trigger.threshold
    : value > trigger.threshold;
}

/** Attempts that count for this generation: a spec change starts over. */
export function currentAttempts(task: Pick<v2.AITask, 'metadata' | 'status'>): number {
  const s = task.status;
  return s?.observedGeneration === task.metadata.generation ? (s?.attempts ?? 0) : 0;
}

/** Applies the rules; `now` in ms since the epoch. */
export function decide(
  task: Pick<v2.AITask, 'metadata' | 'spec' | 'status'>,
  target: TargetObservation,
  metric: MetricObservation | undefined,
  now: number,
  defaults: Defaults = DEFAULTS,
): Verdict {
  const { spec, status } = task;
  if (spec.paused === true) return { kind: 'paused' };
  if (!target.found) return { kind: 'targetMissing', reason: target.reason, message: target.message };
  if (metric === undefined || !metric.ok)
    return {
      kind: 'metricUnavailable',
      reason: metric?.reason ?? 'MetricsUnavailable',
      message: metric?.message ?? 'the metric was not read',
    };
  const value = metric.value;
  if (!isBreach(spec.trigger, value)) return { kind: 'healthy', value };
  const since = status?.breachSince ?? metaTime(new Date(now));
  const holdMs = (spec.trigger.forSeconds ?? 0) * 1000 - (now - Date.parse(since));
  if (holdMs > 0) return { kind: 'breachPending', value, since, remainingMs: holdMs };
  const attempts = currentAttempts(task);
  if (
    spec.remediation.action !== 'Noop' &&
    attempts >= (spec.remediation.maxAttempts ?? defaults.maxAttempts)
  )
    return { kind: 'stalled', value, attempts };
  const blocked = (
    blockedBy: BlockReason,
    message: string,
    remainingMs?: number,
    plan?: ActionPlan,
  ): Verdict => ({
    kind: 'blocked',
    value,
    since,
    blockedBy,
    message,
    ...(remainingMs !== undefined ? { remainingMs } : {}),
    ...(plan !== undefined ? { plan } : {}),
  });
  const last = status?.lastExecutionTime;
  const cooldownMs = (spec.remediation.cooldownSeconds ?? defaults.cooldownSeconds) * 1000;
  if (last !== undefined && Date.parse(last) + cooldownMs > now) {
    const until = metaTime(new Date(Date.parse(last) + cooldownMs));
    return blocked('Cooldown', `cooling down until ${until}`, Date.parse(last) + cooldownMs - now);
  }
  const planned = planAction(spec, target.replicas, defaults);
  if ('blockedBy' in planned) return blocked(planned.blockedBy, planned.message);
  const plan =
    metric.pod !== undefined && (planned.action === 'RestartPod' || planned.action === 'CordonNode')
      ? { action: planned.action, pod: metric.pod }
      : planned;
  if (spec.dryRun === true)
    return blocked('DryRun', `dry run: would run ${describePlan(plan)}`, undefined, plan);
  if (spec.approval === 'Manual')
    return blocked('AwaitingApproval', `${describePlan(plan)} waits for manual approval`, undefined, plan);
  return { kind: 'act', value, since, plan };
}

/** An `act` verdict turned into `blocked` by a guardrail outside the rules (caps, resolution). */
export function blockAct(
  verdict: Extract<Verdict, { kind: 'act' }>,
  blockedBy: BlockReason,
  message: string,
): Verdict {
  return {
    kind: 'blocked',
    value: verdict.value,
    since: verdict.since,
    blockedBy,
    message,
    plan: verdict.plan,
  };
}

/** The action for the spec given the current replica count, or the bound that forbids it. */
export function planAction(
  spec: v2.Spec,
  replicas: number,
  defaults: Defaults = DEFAULTS,
): ActionPlan | { blockedBy: 'AtMaxReplicas' | 'AtMinReplicas'; message: string } {
  const action = spec.remediation.action;
  if (action !== 'ScaleUp' && action !== 'ScaleDown') return { action };
  const step = spec.remediation.scale?.step ?? 1;
  const min = spec.remediation.scale?.minReplicas ?? defaults.minReplicas;
  const max = spec.remediation.scale?.maxReplicas ?? defaults.maxReplicas;
  if (action === 'ScaleUp') {
    if (replicas >= max)
      return { blockedBy: 'AtMaxReplicas', message: `already at ${replicas} replicas (max ${max})` };
    return { action, from: replicas, replicas: Math.min(max, replicas + step) };
  }
  if (replicas <= min)
    return { blockedBy: 'AtMinReplicas', message: `already at ${replicas} replicas (min ${min})` };
  return { action, from: replicas, replicas: Math.max(min, replicas - step) };
}

/** One line for humans: "ScaleUp 2 → 3", "RestartPod". */
export function describePlan(plan: ActionPlan): string {
  return 'replicas' in plan ? `${plan.action} ${plan.from} → ${plan.replicas}` : plan.action;
}
