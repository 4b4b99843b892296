// What one reconcile observes before deciding: the target (the workload from its cache or
// its /scale, refused across namespaces unless allowed, owned by one AITask only, and said
// refused when the operator would not read it) and the metric (the query decision/metric-query.ts chooses:
// the default query rendered for the target, or the task's own query confined to the
// target's namespace, which the reconciler sends to Prometheus or, off the task's interval,
// answers with the last answer: reconcile.ts). Both become the observations `decide` takes.
// A target whose owner wrote a selector no request can carry is TargetInvalid (invalidTarget).

import { targetRef } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import { crossNamespaceRefusal, mayTarget, targetOwner } from './decision/caps.ts';
import type { MetricObservation, TargetObservation } from './decision/decide.ts';
import type { TargetInvalidError } from './edges/target-invalid.ts';
import { metricQuery, type QueryRules } from './decision/metric-query.ts';
import type { Informer } from './runtime/informer.ts';
import { taskTargetIndexKey, type TargetLookup } from './target-caches.ts';

/** What observing a target reads. */
export interface TargetSources {
  /** The AITask cache, with its `target` index (target-caches.ts taskTargetIndexKey). */
  readonly taskCache: Informer<v2.AITask>;
  /** Allow targets outside the AITask's namespace (default false: refused). */
  readonly allowCrossNamespace: boolean;
}

/**
 * The target of the AITask `key` as `decide` sees it (`lookup`: what reading it found, never
 * read when the task may not target it): not found when the task may not target it
 * (CrossNamespaceRefused), when the workload is missing, when the operator would not read it
 * (TargetRefused: too large, a selector past the bound, a cache's budget spent, a kind not
 * served or without /scale, or a missing grant), or when an older task that may act on it
 * owns it (DuplicateTarget); else its desired replicas (default 1).
 */
export function observeTarget(
  s: TargetSources,
  key: string,
  task: v2.AITask,
  lookup: TargetLookup,
): TargetObservation {
  const ref = targetRef(task);
  if (!mayTarget(task, s.allowCrossNamespace))
    return { found: false, reason: 'CrossNamespaceRefused', message: crossNamespaceRefusal(task) };
  const workload = lookup.workload;
  if (!workload)
    return lookup.refused !== undefined
      ? {
          found: false,
          reason: 'TargetRefused',
          message: `${ref} is not read by the operator (${lookup.refused.reason}): ${lookup.refused.message}`,
        }
      : { found: false, reason: 'TargetNotFound', message: `${ref} does not exist` };
  const rivals = s.taskCache
    .byIndex('target', taskTargetIndexKey(task))
    .map((k) => (k === key ? task : s.taskCache.get(k)))
    .filter((t) => t !== undefined);
  const owner = targetOwner(
    rivals.some((t) => t === task) ? rivals : [...rivals, task],
    s.allowCrossNamespace,
  );
  if (owner !== undefined && owner !== key)
    return {
      found: false,
      reason: 'DuplicateTarget',
      message: `AITask ${owner} already watches ${ref}; this one never acts while it exists`,
    };
  return { found: true, replicas: workload.spec?.replicas ?? 1 };
}

/**
 * The target of `task` when its own object holds a value no request can carry (`err`, from
 * reading its pods): TargetInvalid, naming the object, the field and why (the operator's
 * check or the apiserver's message). Evaluated again at the task's interval.
 */
export function invalidTarget(task: v2.AITask, err: TargetInvalidError): TargetObservation {
  return {
    found: false,
    reason: 'TargetInvalid',
    message: `${err.message}; the operator does not act on ${targetRef(task)} until that is fixed`,
  };
}

/** What reading the metric comes to: the query to send, or the observation that stands without one. */
export type MetricPlan = { readonly query: string } | { readonly observation: MetricObservation | undefined };

/**
 * The query to send for `task`, or no query: an undefined observation when the task is
 * paused or its target was not found (nothing is queried then); QueryFailed for a query that
 * cannot be rendered, QueryRefused for one that may not be confined, QueryTooExpensive for a
 * `trigger.query` over the cost bounds (never sent). The reconciler sends the query
 * (edges/prometheus.ts says how) or, off its task's interval, reuses the last answer.
 */
export async function metricPlan(
  s: QueryRules,
  task: v2.AITask,
  target: TargetObservation,
  targetNs: string,
): Promise<MetricPlan> {
  if (task.spec.paused === true || !target.found) return { observation: undefined };
  const query = await metricQuery(task, targetNs, s);
  return query.ok ? { query: query.query } : { observation: query };
}
