// What one reconcile observes before deciding: the target (the workload from its cache or
// its /scale, refused across namespaces unless allowed, owned by one AITask only, and said
// refused when the operator would not read it) and the metric (the query decision/metric-query.ts chooses:
// the default query rendered for the target, or the task's own query confined to the
// target's namespace; read from Prometheus). Both become the observations `decide` takes.
// A target whose owner wrote a selector no request can carry is TargetInvalid (invalidTarget).

import { targetRef } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import { crossNamespaceRefusal, mayTarget, targetOwner } from './decision/caps.ts';
import type { MetricObservation, TargetObservation } from './decision/decide.ts';
import type { MetricReader } from './edges/prometheus.ts';
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

/** What reading the metric needs: Prometheus, and how the query is chosen and checked (metric-query.ts). */
export interface MetricSources extends QueryRules {
  /** Prometheus, or NO_PROMETHEUS when the operator has no URL. */
  readonly prometheus: MetricReader;
}

/**
 * The metric for `task`, or undefined when the task is paused or its target was not found
 * (nothing is queried then). A query that cannot be rendered is QueryFailed, one that may not
 * be confined is QueryRefused, a `trigger.query` over the cost bounds is QueryTooExpensive
 * (never sent); otherwise Prometheus answers (edges/prometheus.ts says how).
 */
export async function observeMetric(
  s: MetricSources,
  task: v2.AITask,
  target: TargetObservation,
  targetNs: string,
): Promise<MetricObservation | undefined> {
  if (task.spec.paused === true || !target.found) return undefined;
  const query = await metricQuery(task, targetNs, s);
  return query.ok ? s.prometheus.query(query.query) : query;
}
