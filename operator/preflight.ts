// The checks between the rules' decision to act and the action, in the order reconcile.ts
// runs them: a remediation slot (decision/caps.ts; a refusal blocks with
// ConcurrencyCapReached and leaves the task waiting for a slot), the LLM's advice for a task
// in LLM mode (not for an approved decision, whose choice was made when it was approved),
// and resolving the pod or node the action would touch within the cordon caps
// (edges/actions.ts `prepare`). A decision approved for one pod or node that would now touch
// another is not acted on: it waits for approval again. The LLM call and the pod's
// resolution are charged to the namespace's reconcile budget when the reconcile runs off its
// task's interval (reconcile-budget.ts). While a RestartPod or CordonNode waits for approval,
// its pod is resolved only with a fresh metric read, at most once per interval unless its
// namespace's budget pays (`choiceToApprove`), never on every reconcile a write triggers. The leadership check right before the write and the action is another
// thing, action-gate.ts.

import type * as v2 from '../api/schema/v2.ts';
import { withDeadline } from '../lib/deadline.ts';
import { applyAdvice, adviceContext } from './llm/advice.ts';
import type { Advisor, LLMSpec } from './llm/advisor.ts';
import { approvalVoided, choiceChanged } from './decision/approval.ts';
import type { RemediationSlots, SlotRefusal } from './decision/caps.ts';
import { blockAct, decide, type Defaults, type MetricObservation, type Verdict } from './decision/decide.ts';
import type { EvaluationExtra } from './decision/evaluate.ts';
import { effectOf, type Actions, type Prepared } from './edges/actions.ts';
import type { ActingTask } from './edges/cordons.ts';
import type { EventRecorder } from './edges/events.ts';
import type { Workload } from './runtime/kinds.ts';
import type { Run } from './reconcile-deadline.ts';
import { TargetInvalidError } from './edges/target-invalid.ts';
import { invalidTarget } from './observe.ts';

/** Default of `--llm-max-timeout`, in ms: the longest an LLM call holds a worker. */
export const DEFAULT_LLM_MAX_TIMEOUT_MS = 10_000;

/** Time the LLM advisor gets past its own timeout before the worker stops waiting for it, in ms. */
const LLM_DEADLINE_GRACE_MS = 1_000;

/** Holders a ConcurrencyCapReached message names; the rest are an ellipsis. */
const HOLDERS_NAMED = 5;

/** What the preflight reads and asks. */
export interface PreflightDeps {
  readonly actions: Actions;
  /** The LLM advisor for AITasks in decision mode LLM. */
  readonly advisor: Advisor;
  /**
   * Remediations in flight across all AITasks (`--max-concurrent-remediations`) and per
   * namespace (`--max-concurrent-remediations-per-namespace`).
   */
  readonly slots: RemediationSlots;
  /** Where the LLM's context reads the target's recent Event reasons. */
  readonly events: EventRecorder;
  readonly defaults: Defaults;
  /**
   * Longest an LLM call may hold a worker, in ms (`--llm-max-timeout`; default
   * DEFAULT_LLM_MAX_TIMEOUT_MS, 10 s): a task's `llm.timeoutSeconds` above it, or unset, is
   * this. No retries (the next reconcile asks again, within the LLM budget).
   */
  readonly llmMaxTimeoutMs?: number;
}

/** The rules' verdict to act. */
export type ActVerdict = Extract<Verdict, { kind: 'act' }>;

/** The verdict after the preflight, its extra, and the resolved action when it may run. */
export interface Preflighted {
  readonly verdict: Verdict;
  readonly extra: EvaluationExtra;
  readonly prepared?: Prepared;
}

/** What the gates read besides the verdict: the target, the metric, the clock and the run. */
export interface GateInputs {
  readonly workload: Workload | undefined;
  readonly metric: MetricObservation | undefined;
  readonly now: number;
  readonly run: Run;
  readonly reread: boolean;
}

/**
 * The gates after the rules' verdict, in order: for a RestartPod or CordonNode waiting for
 * approval, the pod or node it would touch (`choiceToApprove`; `reread` when the metric was
 * read afresh); for an act, `preflight`. A target whose owner wrote a selector no LIST can
 * carry (TargetInvalidError from either) becomes the task's TargetInvalid verdict, said in its
 * status and evaluated again at the interval: never a reconcile error. Without a `workload`
 * the verdict passes unchanged.
 */
export async function gateVerdict(
  d: PreflightDeps & { readonly defaults: Defaults },
  key: string,
  task: v2.AITask,
  verdict: Verdict,
  extra: EvaluationExtra,
  { workload, metric, now, run, reread }: GateInputs,
): Promise<Preflighted> {
  if (workload === undefined) return { verdict, extra };
  try {
    if (verdict.kind === 'blocked' && verdict.blockedBy === 'AwaitingApproval')
      return {
        verdict,
        extra: await choiceToApprove(d.actions, task, verdict.plan, workload, extra, run, reread),
      };
    if (verdict.kind === 'act') return await preflight(d, key, task, verdict, workload, extra, now, run);
    return { verdict, extra };
  } catch (err) {
    if (!(err instanceof TargetInvalidError)) throw err;
    return { verdict: decide(task, invalidTarget(task, err), metric, now, d.defaults), extra };
  }
}

/**
 * `llm` with its timeout bounded by the operator's `maxMs`: the task's `timeoutSeconds` when
 * it is lower, else (also when unset) `maxMs` in seconds.
 */
export function boundLLMTimeout(llm: LLMSpec, maxMs: number): LLMSpec {
  const max = maxMs / 1000;
  const own = llm.timeoutSeconds;
  return own !== undefined && own <= max ? llm : { ...llm, timeoutSeconds: max };
}

/** The ConcurrencyCapReached message: how many hold the full cap, and the first few of them. */
export function slotRefusalMessage({ holders, namespace, flag, cap }: SlotRefusal): string {
  const where = namespace === undefined ? '' : ` in namespace ${namespace}`;
  const named = holders.slice(0, HOLDERS_NAMED).join(', ');
  const more = holders.length > HOLDERS_NAMED ? ', …' : '';
  return `${holders.length} remediations in flight${where} (${flag}=${cap}): ${named}${more}`;
}

/**
 * Runs the checks of the header for the AITask `key` whose rules say `act`: the verdict
 * comes back blocked when one refuses, else with the action resolved (`prepared`). A
 * refused slot asks nothing further; Noop takes no slot. `spend` pays the LLM's advice and
 * the resolution (Spend.must: may throw Deferred before either is asked); the deadline's
 * signal aborts the resolution's reads.
 */
export async function preflight(
  d: PreflightDeps,
  key: string,
  task: v2.AITask,
  act: ActVerdict,
  target: Workload,
  extra: EvaluationExtra,
  now: number,
  { spend, deadline }: Run,
): Promise<Preflighted> {
  if (act.plan.action !== 'Noop') {
    const refused = d.slots.acquire(key, task.metadata.uid ?? key);
    if (refused !== undefined)
      return { verdict: blockAct(act, 'ConcurrencyCapReached', slotRefusalMessage(refused)), extra };
  }
  const llm = task.spec.decision?.mode === 'LLM' ? task.spec.decision.llm : undefined;
  const advised =
    llm !== undefined && extra.decisionId === undefined
      ? await advise(d, key, task, act, llm, target, extra, now, { spend, deadline })
      : { verdict: act, extra };
  return resolve(d, task, advised.verdict, target, advised.extra, { spend, deadline });
}

/** `act` with the LLM's advice applied (its plan, source, note and LLMAvailable condition). */
async function advise(
  d: PreflightDeps,
  key: string,
  task: v2.AITask,
  act: ActVerdict,
  llm: LLMSpec,
  target: Workload,
  extra: EvaluationExtra,
  now: number,
  { spend, deadline }: Run,
): Promise<{ verdict: ActVerdict; extra: EvaluationExtra }> {
  spend.must(2);
  const reasons = await d.events.recentReasons(target, now);
  const ctx = adviceContext(task, act.value, act.since, target, reasons, now, d.defaults);
  const bounded = boundLLMTimeout(llm, d.llmMaxTimeoutMs ?? DEFAULT_LLM_MAX_TIMEOUT_MS);
  const bound = (bounded.timeoutSeconds ?? 0) * 1000 + LLM_DEADLINE_GRACE_MS;
  deadline.extend(bound);
  const advice = await withDeadline(d.advisor.advise(key, bounded, ctx), bound, () => ({
    kind: 'fallback' as const,
    reason: 'LLMTimeout' as const,
    message: `the LLM advisor did not answer within ${bounded.timeoutSeconds ?? 0}s`,
  }));
  const advised = applyAdvice(act.plan, advice);
  return { verdict: { ...act, plan: advised.plan }, extra: { ...extra, ...advised.extra } };
}

/**
 * Resolves the pod or node `verdict`'s plan would touch (blocked when none may be); an
 * approved decision whose choice changed since it was approved waits for approval again,
 * without the approved decision's id or note.
 */
async function resolve(
  d: PreflightDeps,
  task: v2.AITask,
  verdict: ActVerdict,
  target: Workload,
  extra: EvaluationExtra,
  { spend, deadline }: Run,
): Promise<Preflighted> {
  if (verdict.plan.action === 'RestartPod' || verdict.plan.action === 'CordonNode') spend.must();
  const prepared = await d.actions.prepare(verdict.plan, target, actingTask(task), deadline.signal);
  if ('blockedBy' in prepared)
    return { verdict: blockAct(verdict, prepared.blockedBy, prepared.message), extra };
  const effect = effectOf(prepared);
  const waiting = task.status?.pendingDecision;
  const changed =
    extra.decisionId !== undefined && waiting?.id === extra.decisionId
      ? choiceChanged(waiting.effect, effect)
      : undefined;
  if (changed !== undefined && waiting !== undefined)
    return {
      verdict: blockAct(verdict, 'AwaitingApproval', `${waiting.action} waits for manual approval`),
      extra: {
        ...(extra.targetUID !== undefined ? { targetUID: extra.targetUID } : {}),
        effect,
        events: [...(extra.events ?? []), approvalVoided(waiting.id, changed)],
      },
    };
  return { verdict, extra: { ...extra, effect }, prepared };
}

/**
 * The pod (and node) a RestartPod or CordonNode waiting for approval would act on now,
 * recorded in its decision: the approver sees it, and the approval is bound to it. The
 * decision already waiting for the same action keeps the choice it recorded unless
 * `reread` (this reconcile read the metric afresh: by the task's interval, or paid by its
 * namespace's budget): the target's pods are read at most once per evaluation that reads
 * the metric, never on the reconciles a write triggers without one (while it names no pod yet,
 * one its namespace's budget pays, Spend.may). A new decision's first choice is paid by
 * `spend` (Spend.must).
 */
export async function choiceToApprove(
  actions: Actions,
  task: v2.AITask,
  plan: Extract<Verdict, { kind: 'blocked' }>['plan'],
  target: Workload,
  extra: EvaluationExtra,
  { spend, deadline }: Run,
  reread: boolean,
): Promise<EvaluationExtra> {
  if (plan?.action !== 'RestartPod' && plan?.action !== 'CordonNode') return extra;
  const waiting = task.status?.pendingDecision;
  if (waiting?.blockedBy !== 'AwaitingApproval' || waiting.action !== plan.action) spend.must();
  else if (!reread && (waiting.effect?.pod !== undefined || !spend.may()))
    return waiting.effect !== undefined ? { ...extra, effect: waiting.effect } : extra;
  const chosen = await actions.prepare(plan, target, actingTask(task), deadline.signal);
  return 'blockedBy' in chosen ? extra : { ...extra, effect: effectOf(chosen) };
}

/** The AITask as the action adapter marks what it touches. */
function actingTask(task: v2.AITask): ActingTask {
  return { uid: task.metadata.uid ?? '', namespace: task.metadata.namespace ?? '' };
}
