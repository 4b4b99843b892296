// The condition vocabulary of AITask and the pure helpers to update a conditions list
// the way controller-runtime's meta.SetStatusCondition does (lastTransitionTime moves
// only when the status flips), so status writes stay minimal and diffable.

import type { Condition } from '../schema/common.ts';

/** kstatus' standard types plus the domain ones the operator reports. */
export const ConditionType = {
  /** The task is healthy and being monitored as specified. */
  Ready: 'Ready',
  /** The operator is working towards the spec (observedGeneration lags or an action runs). */
  Reconciling: 'Reconciling',
  /** Progress is impossible without a change by the user (e.g. maxAttempts reached). */
  Stalled: 'Stalled',
  /** The target (its kind as spec.target.kind says) exists. */
  TargetFound: 'TargetFound',
  /** The metric could be read from Prometheus. */
  MetricsAvailable: 'MetricsAvailable',
  /** The LLM advisor answered usefully (LLM mode only). */
  LLMAvailable: 'LLMAvailable',
  /** Whether the last decision was allowed to act, or which guardrail stopped it. */
  RemediationAllowed: 'RemediationAllowed',
} as const;
export type ConditionTypeName = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons used in conditions and Events (CamelCase, as Kubernetes expects). */
export const Reason = {
  Monitoring: 'Monitoring',
  Healthy: 'Healthy',
  Breached: 'ThresholdBreached',
  BreachPending: 'BreachPending',
  Remediating: 'Remediating',
  Remediated: 'Remediated',
  ActionFailed: 'ActionFailed',
  TargetNotFound: 'TargetNotFound',
  /** The target exists but the operator does not read it: too large, or its cache is full. */
  TargetRefused: 'TargetRefused',
  /** The target holds a value its owner wrote that no request can carry (a selector that does not parse). */
  TargetInvalid: 'TargetInvalid',
  TargetFound: 'TargetFound',
  CrossNamespaceRefused: 'CrossNamespaceRefused',
  DuplicateTarget: 'DuplicateTarget',
  MetricsUnavailable: 'MetricsUnavailable',
  PrometheusNotConfigured: 'PrometheusNotConfigured',
  NoData: 'NoData',
  QueryFailed: 'QueryFailed',
  QueryRefused: 'QueryRefused',
  QueryTooExpensive: 'QueryTooExpensive',
  MetricsRead: 'MetricsRead',
  Paused: 'Paused',
  DryRun: 'DryRun',
  AwaitingApproval: 'AwaitingApproval',
  Cooldown: 'Cooldown',
  MaxAttemptsReached: 'MaxAttemptsReached',
  ConcurrencyCap: 'ConcurrencyCapReached',
  CordonCap: 'CordonCapReached',
  NodeAlreadyCordoned: 'NodeAlreadyCordoned',
  AtMaxReplicas: 'AtMaxReplicas',
  AtMinReplicas: 'AtMinReplicas',
  PodDisruptionBudget: 'PodDisruptionBudget',
  NoPodToRestart: 'NoPodToRestart',
  LLMAdvice: 'LLMAdvice',
  LLMFallback: 'LLMFallback',
  LLMCircuitOpen: 'LLMCircuitOpen',
  LLMNotAllowed: 'LLMEndpointNotAllowed',
  LLMInsecureEndpoint: 'LLMInsecureEndpoint',
  LLMResponseTooLarge: 'LLMResponseTooLarge',
  LLMBudgetExhausted: 'LLMBudgetExhausted',
  LLMTimeout: 'LLMTimeout',
  LLMUnreachable: 'LLMUnreachable',
  LLMHTTPError: 'LLMHTTPError',
  LLMInvalidAnswer: 'LLMInvalidAnswer',
  LLMActionNotAllowed: 'LLMActionNotAllowed',
  /** A request the apiserver rejected as invalid, or a spec that breaks its schema's rules. */
  Invalid: 'Invalid',
  /** A kind the apiserver does not serve. */
  KindNotServed: 'KindNotServed',
  Forbidden: 'Forbidden',
  Allowed: 'Allowed',
  Reconciled: 'Reconciled',
  Progressing: 'Progressing',
  /** Event: an approval annotation that approves nothing now. */
  ApprovalIgnored: 'ApprovalIgnored',
  /** Events: a decision an earlier run left in flight, and what its verification found. */
  DecisionInterrupted: 'DecisionInterrupted',
  DecisionVerified: 'DecisionVerified',
  DecisionUnverified: 'DecisionUnverified',
  /** Events of the finalizer's and the mark sweep's cleanup of cordons. */
  Uncordoned: 'Uncordoned',
  UncordonRefused: 'UncordonRefused',
  CordonMarkDropped: 'CordonMarkDropped',
} as const;
/** A reason of the vocabulary: what a condition or an Event of the operator may say. */
export type ReasonName = (typeof Reason)[keyof typeof Reason];

/** What a caller wants a condition to say; observedGeneration and times are filled in. */
export interface ConditionInput {
  type: ConditionTypeName;
  status: 'True' | 'False' | 'Unknown';
  reason: ReasonName;
  message: string;
}

/**
 * Returns `conditions` with `input` set: a new entry is appended, an existing one updated
 * in place; `lastTransitionTime` changes only when `status` changes. `now` is an RFC 3339
 * time with second precision, as metav1.Time serialises.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number | undefined,
  now: string,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime: prev && prev.status === input.status ? prev.lastTransitionTime : now,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** Removes the condition of `type`, if present. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionTypeName,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The condition of `type`, if present. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionTypeName,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists with status True. */
export function isTrue(conditions: readonly Condition[] | undefined, type: ConditionTypeName): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** Formats a Date as metav1.Time does: RFC 3339, UTC, whole seconds. */
export function metaTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
