// What an AITask would have done over a recorded metric: the reconcile's chain of decision
// functions (clampSpec, firstSight, decide, evaluate, recordOutcome, withCooldown, the status
// stored, cut by boundStatus, only when it changed) run over (time, value) samples with a
// simulated clock, so `kubectl aiops simulate` answers with the operator's own rules and none
// written twice.
// The clock follows the operator's queue: the next evaluation is the earliest requeue a
// reconcile asked for (bounded by boundRequeue), and a scale, which changes the Deployment's
// replicas, is evaluated again at once, as the Deployment's watch event makes the operator do.
// What the replay cannot know it assumes and says: every action succeeds (a pod to restart,
// a node within the cordon caps, a free remediation slot), nobody approves a decision that
// waits for approval, and in LLM mode the advisor is not asked: the rules' plan goes on, as
// when the advisor falls back. The metric is replayed as recorded: an action does not change
// it. Pure: no I/O, no clock of its own.

import { isDeepStrictEqual } from 'node:util';
import type * as v2 from '../../api/schema/v2.ts';
import { metaTime } from '../../api/status/conditions.ts';
import { boundStatus } from '../../api/status/bounded.ts';
import { boundRequeue, brokenRules, clampSpec } from './clamp.ts';
import {
  decide,
  describePlan,
  DEFAULTS,
  type ActionPlan,
  type Defaults,
  type MetricObservation,
  type Verdict,
} from './decide.ts';
import { evaluate, type EvaluationExtra } from './evaluate.ts';
import { firstSight } from './first-sight.ts';
import { recordOutcome, withCooldown } from './outcome.ts';

/** One sample of the metric: `at` in ms since the epoch. */
export interface Sample {
  readonly at: number;
  readonly value: number;
}

/** Prometheus' default lookback: an instant query answers with the last sample less old than this (ms). */
export const DEFAULT_LOOKBACK_MS = 300_000;

/** Changes a replay keeps in its timeline by default; the rest are only counted. */
export const DEFAULT_MAX_CHANGES = 200;

/** What to replay. */
export interface ReplayInput {
  /** The AITask; its status and annotations are not read (the replay starts from first sight). */
  readonly task: Pick<v2.AITask, 'metadata' | 'spec'>;
  /** The metric's samples, oldest first. */
  readonly samples: readonly Sample[];
  /** The window, in ms since the epoch: the first evaluation is at `from`, none after `to`. */
  readonly from: number;
  readonly to: number;
  /** The target's replicas when the window starts. */
  readonly replicas: number;
  /** The operator's defaults (default DEFAULTS). */
  readonly defaults?: Defaults;
  /** A sample answers while it is less old than this (default DEFAULT_LOOKBACK_MS, 5 min). */
  readonly lookbackMs?: number;
  /** Changes kept in the timeline (default DEFAULT_MAX_CHANGES). */
  readonly maxChanges?: number;
}

/** What the task would have done at one evaluation, in words (`would` marks a decision not taken). */
export interface Decision {
  readonly kind: Verdict['kind'];
  /** The guardrail of a `blocked` verdict. */
  readonly blockedBy?: string;
  /** The action decided or stopped, for humans ("ScaleUp 2 → 3"). */
  readonly plan?: string;
  /** What happened instead of acting: waiting for approval, a dry run, asking the advisor. */
  readonly would?: 'waitForApproval' | 'runDry' | 'askAdvisor';
}

/** A change of phase or decision, at the evaluation that made it. */
export interface Change {
  readonly at: number;
  /** The metric's value then; undefined when there was none. */
  readonly value: number | undefined;
  readonly phase: v2.Phase;
  readonly decision: Decision;
  /** The target's replicas after this evaluation. */
  readonly replicas: number;
}

/** An action the operator would have run. */
export interface ReplayAction {
  readonly at: number;
  readonly value: number;
  readonly plan: ActionPlan;
  /** In LLM mode: the advisor would have been asked first and could have chosen otherwise. */
  readonly askAdvisor: boolean;
}

/** The replay's figures. */
export interface ReplaySummary {
  readonly evaluations: number;
  /** Actions run, by action. */
  readonly actions: Readonly<Partial<Record<v2.Action, number>>>;
  readonly firstAction?: number;
  readonly lastAction?: number;
  /** When the task first reached phase Failed. */
  readonly failedAt?: number;
  /** Evaluations whose decision would have waited for approval, ran dry, or found no sample. */
  readonly awaitingApproval: number;
  readonly dryRuns: number;
  readonly noData: number;
  readonly replicas: { readonly start: number; readonly end: number };
}

/** The replay: every action, the changes (capped, `omitted` counts the rest) and the summary. */
export interface Replay {
  readonly actions: readonly ReplayAction[];
  readonly changes: readonly Change[];
  readonly omitted: number;
  readonly summary: ReplaySummary;
  /** Why the operator would refuse the spec (its schema's rules); then nothing is replayed. */
  readonly refused?: string;
}

/** The message the action adapter gives a successful action, as the replay assumes it. */
function outcomeMessage(plan: ActionPlan): string {
  return plan.action === 'Noop' ? 'recorded only (Noop)' : `${describePlan(plan)} (replayed)`;
}

/** The status as the apiserver would store it: bounded, and plain JSON. */
function stored(status: v2.Status): v2.Status {
  return JSON.parse(JSON.stringify(boundStatus(status))) as v2.Status;
}

/** The status after writing `next` over `current`, as the reconciler writes: only when they differ. */
function written(current: v2.Status, next: v2.Status): v2.Status {
  return isDeepStrictEqual(current, next) ? current : stored(next);
}

/** The decision of `verdict` in words. */
function decisionOf(verdict: Verdict, llm: boolean): Decision {
  const planned = verdict.kind === 'act' || verdict.kind === 'blocked' ? verdict.plan : undefined;
  const plan = planned !== undefined ? { plan: describePlan(planned) } : {};
  if (verdict.kind === 'act') return { kind: 'act', ...plan, ...(llm ? { would: 'askAdvisor' } : {}) };
  if (verdict.kind !== 'blocked') return { kind: verdict.kind };
  const would =
    verdict.blockedBy === 'AwaitingApproval'
      ? { would: 'waitForApproval' as const }
      : verdict.blockedBy === 'DryRun'
        ? { would: 'runDry' as const }
        : {};
  return { kind: 'blocked', blockedBy: verdict.blockedBy, ...plan, ...would };
}

/** The same decision, for the timeline's "changes only". */
function sameDecision(a: Decision, b: Decision): boolean {
  return a.kind === b.kind && a.blockedBy === b.blockedBy && a.plan === b.plan && a.would === b.would;
}

/**
 * Reads the samples in time order: the last one at or before `at`, less old than the lookback
 * (Prometheus' left-open window); NoData
 * when there is none or it is not a finite number, as Prometheus' answer reads then.
 */
function sampleReader(samples: readonly Sample[], lookbackMs: number): (at: number) => MetricObservation {
  let next = 0;
  return (at) => {
    while (next < samples.length && (samples[next]?.at ?? Infinity) <= at) next++;
    const last = samples[next - 1];
    if (last !== undefined && at - last.at < lookbackMs)
      return Number.isFinite(last.value)
        ? { ok: true, value: last.value }
        : { ok: false, reason: 'NoData', message: `the sample is not a finite number (${last.value})` };
    return {
      ok: false,
      reason: 'NoData',
      message: `no sample within ${lookbackMs / 1000}s before ${metaTime(new Date(at))}`,
    };
  };
}

/** Replays `input` (see the header for what it assumes). */
export function replay(input: ReplayInput): Replay {
  const defaults = input.defaults ?? DEFAULTS;
  const maxChanges = input.maxChanges ?? DEFAULT_MAX_CHANGES;
  const metadata = { ...input.task.metadata };
  delete metadata.annotations;
  const broken = brokenRules(input.task.spec);
  const actions: ReplayAction[] = [];
  const changes: Change[] = [];
  const counts: Partial<Record<v2.Action, number>> = {};
  let omitted = 0;
  let evaluations = 0;
  let awaitingApproval = 0;
  let dryRuns = 0;
  let noData = 0;
  let failedAt: number | undefined;
  let replicas = input.replicas;
  const summary = (): ReplaySummary => ({
    evaluations,
    actions: counts,
    ...(actions[0] !== undefined ? { firstAction: actions[0].at } : {}),
    ...(actions.length > 0 ? { lastAction: actions[actions.length - 1]?.at ?? 0 } : {}),
    ...(failedAt !== undefined ? { failedAt } : {}),
    awaitingApproval,
    dryRuns,
    noData,
    replicas: { start: input.replicas, end: replicas },
  });
  if (broken.length > 0)
    return {
      actions,
      changes,
      omitted,
      summary: summary(),
      refused: `the spec breaks its schema's rules: ${broken.join('; ')}`,
    };

  const spec = clampSpec(input.task.spec);
  const intervalMs = (spec.intervalSeconds ?? defaults.intervalSeconds) * 1000;
  const llm = spec.decision?.mode === 'LLM';
  const metricAt = sampleReader(input.samples, input.lookbackMs ?? DEFAULT_LOOKBACK_MS);
  let status = stored(firstSight(undefined, metaTime(new Date(input.from))) ?? {});
  let last: Change | undefined;

  /** One reconcile at `now`: its requeue delay, and whether it changed the replicas. */
  const reconcileAt = (now: number): { requeueMs: number; scaled: boolean } => {
    evaluations++;
    const task = { metadata, spec, status };
    const target = { found: true as const, replicas };
    const metric = spec.paused === true ? undefined : metricAt(now);
    const verdict = decide(task, target, metric, now, defaults);
    const extra: EvaluationExtra =
      verdict.kind === 'act' && llm ? { note: 'the advisor would be asked; the rules decide here' } : {};
    const ev = evaluate(task, verdict, now, `replay-${evaluations}`, intervalMs, extra);
    let next = ev.status;
    let scaled = false;
    if (ev.act !== undefined && verdict.kind === 'act') {
      const { decision, plan } = ev.act;
      const decided = { ...task, status: written(status, ev.status) };
      const outcome = { executed: true as const, message: outcomeMessage(plan) };
      const after = recordOutcome(decided, decided.status, decision, plan, outcome, now);
      next = withCooldown(decided, after, { target, metric }, now, defaults, intervalMs).status;
      actions.push({ at: now, value: verdict.value, plan, askAdvisor: llm });
      counts[plan.action] = (counts[plan.action] ?? 0) + 1;
      if ('replicas' in plan) {
        scaled = plan.replicas !== replicas;
        replicas = plan.replicas;
      }
    }
    status = written(status, next);
    if (verdict.kind === 'blocked' && verdict.blockedBy === 'AwaitingApproval') awaitingApproval++;
    if (verdict.kind === 'blocked' && verdict.blockedBy === 'DryRun') dryRuns++;
    if (metric !== undefined && !metric.ok) noData++;
    const phase = status.phase ?? 'Pending';
    if (phase === 'Failed') failedAt ??= now;
    const change: Change = {
      at: now,
      value: metric?.ok === true ? metric.value : undefined,
      phase,
      decision: decisionOf(verdict, llm),
      replicas,
    };
    if (
      last === undefined ||
      last.phase !== phase ||
      !sameDecision(last.decision, change.decision) ||
      scaled
    ) {
      if (changes.length < maxChanges) changes.push(change);
      else omitted++;
    }
    last = change;
    return { requeueMs: boundRequeue(ev.requeueAfterMs, intervalMs), scaled };
  };

  for (let due = input.from; due <= input.to;) {
    const now = due;
    let r = reconcileAt(now);
    due = now + r.requeueMs;
    while (r.scaled) {
      r = reconcileAt(now);
      due = Math.min(due, now + r.requeueMs);
    }
  }
  return { actions, changes, omitted, summary: summary() };
}
