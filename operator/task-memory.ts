// What the reconciler remembers of each AITask between reconciles, so a reconcile off the
// task's interval costs no more than its namespace's budget (reconcile-budget.ts): when the
// task is next due (by its interval, or a requeue the operator asked for), the last query
// sent with its answer, and the last ApprovalIgnored Event recorded alone. A reconcile off
// the interval reuses the answer unless it wants a fresh one (a new generation, an approval
// of the decision waiting) and the budget pays for it. One small entry per task, dropped
// with the task.

import type * as v2 from '../api/schema/v2.ts';
import { withDeadline } from '../lib/deadline.ts';
import { namespaceOf } from '../lib/keys.ts';
import { approvalOf } from './decision/approval.ts';
import type { MetricObservation, TargetObservation } from './decision/decide.ts';
import type { QueryRules } from './decision/metric-query.ts';
import type { MetricReader } from './edges/prometheus.ts';
import { metricPlan } from './observe.ts';
import { DUE_SLACK_MS, type ReconcileBudget, type Spend } from './reconcile-budget.ts';

/**
 * Longest a Prometheus query holds a worker, in ms: the client's own 5 s per-query timeout
 * (edges/prometheus.ts) plus a second, so a server that dribbles its answer byte by byte
 * cannot keep the worker either.
 */
export const PROMETHEUS_DEADLINE_MS = 6_000;

/** What the metric is read with: Prometheus, and how the query is chosen (metric-query.ts). */
export interface MetricSources extends QueryRules {
  /** Prometheus, or NO_PROMETHEUS when the operator has no URL. */
  readonly prometheus: MetricReader;
}

/** One task's entry. */
interface Seen {
  /** When the task is due, ms. */
  dueAt: number;
  /** The requeue the last evaluation by the interval asked for, ms. */
  everyMs?: number;
  /** The last query sent, its answer, and the generation it was sent for. */
  query?: string;
  metric?: MetricObservation;
  generation?: number;
  /** The note of the last ApprovalIgnored Event recorded alone. */
  ignored?: string;
}

/** The reconciler's memory of its tasks (see the header). */
export class TaskMemory {
  readonly #seen = new Map<string, Seen>();
  readonly #budget: ReconcileBudget;

  constructor(budget: ReconcileBudget) {
    this.#budget = budget;
  }

  /** What a reconcile of `key` in `namespace` starting at `now` (ms) spends: due when never seen or past its due time (less DUE_SLACK_MS). */
  spend(key: string, namespace: string, now: number): Spend {
    const seen = this.#seen.get(key);
    return this.#budget.spend(namespace, seen === undefined || now >= seen.dueAt - DUE_SLACK_MS);
  }

  /**
   * The metric for `task` (the query metricPlan chooses): sent to Prometheus (bounded by
   * PROMETHEUS_DEADLINE_MS, aborted by `signal`), or the last answer to the same query when
   * the reconcile runs off the task's interval and wants nothing new or `spend` has no token
   * for it; a query never answered before is paid by Spend.must. `fresh`: Prometheus was asked.
   */
  async metric(
    s: MetricSources,
    key: string,
    task: v2.AITask,
    target: TargetObservation,
    targetNs: string,
    spend: Spend,
    signal: AbortSignal,
  ): Promise<{ metric: MetricObservation | undefined; fresh: boolean }> {
    const plan = await metricPlan(s, task, target, targetNs);
    if (!('query' in plan)) return { metric: plan.observation, fresh: false };
    const seen = this.#seen.get(key);
    const last = seen?.query === plan.query ? seen.metric : undefined;
    if (last !== undefined) {
      const pending = task.status?.pendingDecision;
      const wanted =
        spend.due ||
        seen?.generation !== task.metadata.generation ||
        (pending?.blockedBy === 'AwaitingApproval' && approvalOf(task) === pending.id);
      if (!wanted || !spend.may()) return { metric: last, fresh: false };
    } else spend.must();
    const metric = await withDeadline(s.prometheus.query(plan.query, signal), PROMETHEUS_DEADLINE_MS, () => ({
      ok: false as const,
      reason: 'MetricsUnavailable' as const,
      message: `Prometheus did not answer within ${PROMETHEUS_DEADLINE_MS / 1000}s`,
    }));
    const now = this.#seen.get(key);
    this.#seen.set(key, {
      dueAt: now?.dueAt ?? 0,
      query: plan.query,
      metric,
      ...(task.metadata.generation !== undefined ? { generation: task.metadata.generation } : {}),
      ...(now?.ignored !== undefined ? { ignored: now.ignored } : {}),
    });
    return { metric, fresh: true };
  }

  /**
   * Records when `key` is next due and returns the wait in ms: `requeueMs` from `now` when the
   * reconcile ran by the interval or read the metric afresh (`reset`); else the earlier of
   * the due time kept and `requeueMs`, so a trigger off the interval never pushes the next
   * evaluation back.
   */
  due(key: string, reset: boolean, now: number, requeueMs: number): number {
    const seen = this.#seen.get(key) ?? { dueAt: 0 };
    const dueAt = reset ? now + requeueMs : Math.min(seen.dueAt, now + requeueMs);
    this.#seen.set(key, { ...seen, dueAt, ...(reset ? { everyMs: requeueMs } : {}) });
    return Math.max(0, dueAt - now);
  }

  /**
   * A reconcile of `key` (namespace/name) was cut at its deadline after `heldMs`: its namespace
   * is charged one call per second the worker was held, and the task is not due again
   * before its last requeue has passed once more (its retries are off-interval, paid by the
   * budget), so tasks that always overrun hold no more workers than their budget buys.
   */
  overran(key: string, now: number, heldMs: number): void {
    this.#budget.charge(namespaceOf(key), Math.ceil(heldMs / 1000));
    const seen = this.#seen.get(key);
    if (seen !== undefined) seen.dueAt = Math.max(seen.dueAt, now + (seen.everyMs ?? heldMs));
    else this.#seen.set(key, { dueAt: now + heldMs });
  }

  /**
   * True, and remembered, when `note` is not the last ApprovalIgnored Event recorded alone
   * for `key` and `pay` (Spend.may) grants the Event.
   */
  newIgnored(key: string, note: string, pay: () => boolean): boolean {
    const seen = this.#seen.get(key) ?? { dueAt: 0 };
    if (seen.ignored === note || !pay()) return false;
    this.#seen.set(key, { ...seen, ignored: note });
    return true;
  }

  /** Makes `key` due at once (a freed slot woke it, or it acted: the operator's own requeue). */
  wake(key: string): void {
    const seen = this.#seen.get(key);
    if (seen !== undefined) seen.dueAt = 0;
  }

  /** Drops `key`'s entry (the task is gone). */
  forget(key: string): void {
    this.#seen.delete(key);
  }
}
