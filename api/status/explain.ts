// Why an AITask is in its phase, in plain language: the kstatus verdict (Terminating,
// InProgress because observedGeneration lags, Failed, Current) plus the operator's own
// reasons from the conditions it writes, what happens next and when, and what the user can
// do. Pure, so `kubectl aiops explain-phase` and any other reader agree on the account.

import { FINALIZER } from '../install.ts';
import type { Condition } from '../schema/common.ts';
import { targetTypeName } from '../schema/target.ts';
import type * as v2 from '../schema/v2.ts';
import { ConditionType, Reason } from './conditions.ts';
import { computeKStatus, type KStatusResult } from './kstatus.ts';

/** One reason the object is where it is. */
export interface Cause {
  /** CamelCase reason, as in conditions and Events. */
  reason: string;
  /** The condition that reported it; absent for causes read from metadata or spec. */
  condition?: string;
  message: string;
}

/** The whole account of an AITask's phase. */
export interface Explanation {
  name: string;
  namespace: string;
  /** `status.phase`, or `Pending` when the operator has written none. */
  phase: string;
  /** Time of the most recent condition transition, if any (RFC 3339). */
  since?: string;
  kstatus: KStatusResult;
  generation: number;
  observedGeneration?: number;
  causes: Cause[];
  /** What happens next without anyone's help. */
  next: string;
  /** When that happens, if known (RFC 3339). */
  nextAt?: string;
  /** What the user can do, most useful first. */
  remedies: string[];
}

/** Operator defaults the account assumes when the spec leaves a field empty. */
export const EXPLAIN_DEFAULTS = { intervalSeconds: 60, cooldownSeconds: 300, maxAttempts: 3 } as const;

/** Conditions whose listed status means something needs attention (kstatus polarity). */
const ABNORMAL: Readonly<Record<string, 'True' | 'False'>> = {
  [ConditionType.Stalled]: 'True',
  [ConditionType.Reconciling]: 'True',
  [ConditionType.Ready]: 'False',
  [ConditionType.TargetFound]: 'False',
  [ConditionType.MetricsAvailable]: 'False',
  [ConditionType.LLMAvailable]: 'False',
  [ConditionType.RemediationAllowed]: 'False',
};

type Task = Pick<v2.AITask, 'metadata' | 'spec' | 'status'>;

function addSeconds(time: string | undefined, seconds: number): string | undefined {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? undefined : new Date(ms + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function targetRef(task: Task): string {
  const t = task.spec.target;
  return `${targetTypeName(t)} ${t.namespace ?? task.metadata.namespace ?? 'default'}/${t.name}`;
}

/** What the user can do about a reason; undefined for reasons that need nothing. */
function remedyFor(reason: string, task: Task, ref: string): string | undefined {
  const name = task.metadata.name ?? '';
  const ns = task.metadata.namespace ?? 'default';
  const patch = (json: string): string => `kubectl patch at ${name} -n ${ns} --type merge -p '${json}'`;
  switch (reason) {
    case Reason.TargetNotFound:
      return `create ${ref}, or point spec.target at an existing Deployment or StatefulSet`;
    case Reason.TargetRefused:
      return `shrink ${ref} to what the message names (a selector of a few labels, no huge fields), or ask the cluster admin about the operator's cache budget`;
    case Reason.TargetInvalid:
      return `whoever writes ${ref} fixes the field the message names (a label selector such as app=web); the operator evaluates the task again at its interval and goes on once it parses`;
    case Reason.CrossNamespaceRefused:
      return `create the AITask in the target's namespace, or start the operator with cross-namespace targets allowed`;
    case Reason.DuplicateTarget:
      return `another AITask already watches ${ref}: delete or retarget one of them`;
    case Reason.PrometheusNotConfigured:
      return "give the operator your Prometheus' URL: AIOPS_PROMETHEUS_URL on its container (kubectl -n aiops-system set env deployment/aiops-operator AIOPS_PROMETHEUS_URL=<url>; Helm: prometheus.url; OLM: the Subscription's spec.config.env)";
    case Reason.MetricsUnavailable:
    case Reason.QueryFailed:
      return "check that Prometheus is reachable at the operator's --prometheus-url and that spec.trigger.query is valid PromQL";
    case Reason.QueryRefused:
      return `spec.trigger.query must read only the target's namespace: drop the namespace matchers that name or could match another one (the operator adds namespace="<target namespace>" itself), or have the operator started with --confine-queries=false on a single-tenant cluster`;
    case Reason.QueryTooExpensive:
      return "narrow spec.trigger.query to what the message names: ranges and subquery windows (nested ones added up) within the operator's --max-query-range, every subquery step written and no finer than its --min-query-resolution";
    case Reason.NoData:
      return 'run spec.trigger.query (or the default query) in Prometheus: it must return exactly one sample';
    case Reason.Paused:
      return `resume it: ${patch('{"spec":{"paused":false}}')}`;
    case Reason.DryRun:
      return `let it act: ${patch('{"spec":{"dryRun":false}}')}`;
    case Reason.AwaitingApproval:
      return `approval is Manual: approve the waiting decision with kubectl aiops approve ${name} -n ${ns}, or let the operator act on its own: ${patch('{"spec":{"approval":"Auto"}}')}`;
    case 'AtMaxReplicas':
    case 'AtMinReplicas':
      return 'the scale bound is reached: widen spec.remediation.scale (minReplicas/maxReplicas) or pick another action';
    case 'PodDisruptionBudget':
      return `a PodDisruptionBudget blocks the eviction: wait for more pods of ${ref} to be ready, or relax the budget`;
    case 'NoPodToRestart':
      return `no pod of ${ref} qualifies for a restart: check its pods (kubectl get pods -n <namespace>)`;
    case Reason.MaxAttemptsReached:
      return `fix ${ref} by hand (attempts reset when it recovers), or raise spec.remediation.maxAttempts`;
    case Reason.Cooldown:
      return `wait, or shorten spec.remediation.cooldownSeconds`;
    case Reason.ConcurrencyCap:
    case Reason.CordonCap:
      return 'wait for other remediations to finish, or raise the operator-wide cap';
    case Reason.LLMCircuitOpen:
    case Reason.LLMFallback:
      return 'check the LLM endpoint in spec.decision.llm; decisions fall back to rules meanwhile';
    case Reason.LLMNotAllowed:
      return "add spec.decision.llm.endpoint to the operator's --llm-endpoint-allowlist, or use decision mode Rules";
    case Reason.LLMInsecureEndpoint:
      return 'use an https spec.decision.llm.endpoint (plain http only on a loopback address), or run the operator without an LLM API key for a server that needs none';
    case Reason.LLMResponseTooLarge:
      return 'the LLM endpoint answered with more than 1 MiB: check that spec.decision.llm.endpoint is a chat-completions URL; decisions fall back to rules meanwhile';
    case Reason.Forbidden:
      return `grant the operator's ServiceAccount the missing permission (kubectl auth can-i --as=system:serviceaccount:<operator-namespace>:<operator-sa> ...)`;
    case 'Invalid':
      return `the apiserver rejected a request of the operator as invalid; the Stalled condition and the Events say which: kubectl aiops describe ${name} -n ${ns}`;
    case 'KindNotServed':
      return 'the operator needs a kind this cluster does not serve (the Stalled condition names it): install its API, or run an operator release that matches the cluster';
    case Reason.ActionFailed:
      return `see the Events: kubectl aiops describe ${name} -n ${ns}`;
    default:
      return undefined;
  }
}

/** Abnormal conditions as causes, one per reason (several conditions often share one). */
function conditionCauses(conditions: readonly Condition[]): Cause[] {
  const seen = new Set<string>();
  return conditions
    .filter((c) => ABNORMAL[c.type] === c.status && !seen.has(c.reason) && seen.add(c.reason))
    .map((c) => ({ reason: c.reason, condition: c.type, message: c.message }));
}

function latestTransition(conditions: readonly Condition[]): string | undefined {
  return conditions
    .map((c) => c.lastTransitionTime)
    .reduce<string | undefined>(
      (a, b) => (a === undefined || Date.parse(b) > Date.parse(a) ? b : a),
      undefined,
    );
}

function has(causes: readonly Cause[], reason: string): boolean {
  return causes.some((c) => c.reason === reason);
}

/** Adds causes the spec and status imply even when no condition states them yet. */
function impliedCauses(task: Task, causes: Cause[]): void {
  const status = task.status ?? {};
  if ((task.spec.paused === true || status.phase === 'Paused') && !has(causes, Reason.Paused))
    causes.push({
      reason: Reason.Paused,
      message: 'spec.paused is true: the operator neither evaluates nor acts',
    });
  if (task.spec.dryRun === true && !has(causes, Reason.DryRun))
    causes.push({
      reason: Reason.DryRun,
      message: 'spec.dryRun is true: decisions are recorded, never executed',
    });
  const pending = status.pendingDecision;
  const waiting =
    status.phase === 'AwaitingApproval' || (task.spec.approval === 'Manual' && pending !== undefined);
  if (waiting && !has(causes, Reason.AwaitingApproval))
    causes.push({
      reason: Reason.AwaitingApproval,
      message: pending
        ? `decision ${pending.id} (${pending.action}, ${pending.reason}) waits for approval since ${pending.at}`
        : 'a decision waits for manual approval',
    });
}

/** Reasons of a request the apiserver refused for good; the operator retries them only after 10 min. */
const TERMINAL: readonly string[] = [Reason.Forbidden, 'Invalid', 'KindNotServed'];

function nextStep(task: Task, k: KStatusResult, causes: readonly Cause[]): { next: string; nextAt?: string } {
  const status = task.status ?? {};
  const interval = task.spec.intervalSeconds ?? EXPLAIN_DEFAULTS.intervalSeconds;
  if (k.status === 'Terminating') {
    const nodes = status.cordonedNodes ?? [];
    const owed = nodes.length ? `uncordons ${nodes.join(', ')} and ` : '';
    return {
      next: (task.metadata.finalizers ?? []).includes(FINALIZER)
        ? `the operator ${owed}removes ${FINALIZER}; then the object is deleted`
        : 'the object is deleted once the remaining finalizers are removed by their owners',
    };
  }
  if (k.reason === 'NotObserved') return { next: 'the operator reconciles the object as soon as it sees it' };
  if (k.reason === 'GenerationLag')
    return { next: `the operator reconciles generation ${task.metadata.generation ?? 0} on its next pass` };
  if (has(causes, Reason.Paused)) return { next: 'nothing happens until spec.paused is false' };
  const stalled = (status.conditions ?? []).find((c) => c.type === ConditionType.Stalled);
  if (stalled?.status === 'True' && TERMINAL.includes(stalled.reason))
    return { next: 'the operator tries again 10 min after the failure, or as soon as the spec changes' };
  if (k.status === 'Failed') return { next: 'nothing happens until the target recovers or the spec changes' };
  if (has(causes, Reason.AwaitingApproval)) return { next: 'the decision is executed once it is approved' };
  if (has(causes, Reason.Cooldown)) {
    const cooldown = task.spec.remediation.cooldownSeconds ?? EXPLAIN_DEFAULTS.cooldownSeconds;
    const at = addSeconds(status.lastExecutionTime, cooldown);
    return at
      ? { next: `the cooldown ends at ${at}; the next breach after that may act`, nextAt: at }
      : { next: 'the cooldown ends, then the next breach may act' };
  }
  if (has(causes, Reason.BreachPending)) {
    const at = addSeconds(status.breachSince, task.spec.trigger.forSeconds ?? 0);
    return at
      ? {
          next: `if the breach still holds at ${at}, the operator decides on ${task.spec.remediation.action}`,
          nextAt: at,
        }
      : {
          next: `if the breach holds for ${task.spec.trigger.forSeconds ?? 0}s, the operator decides on an action`,
        };
  }
  return { next: `the operator evaluates the metric again within ${interval}s` };
}

/** Explains `task`'s phase. Pure: every time-dependent statement is derived from the object. */
export function explainPhase(task: Task): Explanation {
  const k = computeKStatus(task);
  const status = task.status ?? {};
  const conditions = status.conditions ?? [];
  const causes: Cause[] = [];
  if (k.status === 'Terminating' || k.reason === 'NotObserved' || k.reason === 'GenerationLag')
    causes.push({ reason: k.reason, message: k.message });
  causes.push(...conditionCauses(conditions));
  impliedCauses(task, causes);
  if (causes.length === 0) causes.push({ reason: k.reason, message: k.message });
  const ref = targetRef(task);
  const remedies = [
    ...new Set(causes.map((c) => remedyFor(c.reason, task, ref)).filter((r) => r !== undefined)),
  ];
  const name = task.metadata.name ?? '';
  const ns = task.metadata.namespace ?? 'default';
  if (k.status === 'Terminating')
    remedies.push(`if the operator is not running: kubectl aiops force-finalize ${name} -n ${ns}`);
  if (k.reason === 'GenerationLag')
    remedies.push(`see what changed: kubectl aiops generation-diff ${name} -n ${ns}`);
  if (k.reason === 'NotObserved' || k.reason === 'GenerationLag')
    remedies.push(
      'if this lasts, check that the operator is running (its leader Lease aiops-operator-leader is renewed)',
    );
  const since = latestTransition(conditions);
  const { next, nextAt } = nextStep(task, k, causes);
  return {
    name,
    namespace: ns,
    phase: status.phase ?? 'Pending',
    ...(since !== undefined ? { since } : {}),
    kstatus: k,
    generation: task.metadata.generation ?? 0,
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    causes,
    next,
    ...(nextAt !== undefined ? { nextAt } : {}),
    remedies,
  };
}
