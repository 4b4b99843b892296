// What one reconcile observes before deciding: the target (the Deployment from the cache,
// refused across namespaces unless allowed, owned by one AITask only, and said refused when
// the cache would not hold it) and the metric (the
// default query rendered for the target, or the task's own query confined to the target's
// namespace, read from Prometheus). Both become the observations `decide` takes.

import type * as v2 from '../api/schema/v2.ts';
import { crossNamespaceRefusal, mayTarget, targetOwner } from './decision/caps.ts';
import type { MetricObservation, TargetObservation } from './decision/decide.ts';
import { renderQuery, type MetricReader } from './edges/prometheus.ts';
import type { Refusal } from './runtime/cache-budget.ts';
import type { Informer } from './runtime/informer.ts';
import { DEFAULT_QUERY_BOUNDS, type QueryBounds } from './decision/query-cost.ts';
import type { Deployment } from './runtime/kinds.ts';

/** What observing a target reads. */
export interface TargetSources {
  /** The AITask cache, with its `target` index (`namespace/name` of the Deployment). */
  readonly taskCache: Informer<v2.AITask>;
  /** Allow targets outside the AITask's namespace (default false: refused). */
  readonly allowCrossNamespace: boolean;
  /** Why the Deployment cache refused a Deployment, by key (Informer.refusal); default none. */
  readonly deployments?: { refusal(key: string): Refusal | undefined };
}

/**
 * The target of the AITask `key` as `decide` sees it: not found when the Deployment is
 * missing, when the cache refused it (TargetRefused: too large, a selector past the bound,
 * or the cache's budget spent), when the task may not target it (CrossNamespaceRefused), or
 * when an older task that may act on it owns it (DuplicateTarget); else its desired replicas
 * (default 1).
 */
export function observeTarget(
  s: TargetSources,
  key: string,
  task: v2.AITask,
  targetNs: string,
  deployment: Deployment | undefined,
): TargetObservation {
  const ref = `Deployment ${targetNs}/${task.spec.target.name}`;
  if (!mayTarget(task, s.allowCrossNamespace))
    return { found: false, reason: 'CrossNamespaceRefused', message: crossNamespaceRefusal(task) };
  if (!deployment) {
    const refused = s.deployments?.refusal(`${targetNs}/${task.spec.target.name}`);
    return refused !== undefined
      ? {
          found: false,
          reason: 'TargetRefused',
          message: `${ref} is not read by the operator (${refused.reason}): ${refused.message}`,
        }
      : { found: false, reason: 'TargetNotFound', message: `${ref} does not exist` };
  }
  const rivals = s.taskCache
    .byIndex('target', `${targetNs}/${task.spec.target.name}`)
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
  return { found: true, replicas: deployment.spec?.replicas ?? 1 };
}

/**
 * The PromQL parser behind confineQuery, loaded with the first task that brings its own query:
 * decoding the grammar's tables at import costs every start CPU and an optimizing compile
 * (the node binary's compiler paged in: docs/benchmarks.md), though tasks on the default query
 * never parse PromQL.
 */
let confinement: Promise<typeof import('./decision/confine.ts')> | undefined;

/** What reading the metric needs. */
export interface MetricSources {
  /** Prometheus, or NO_PROMETHEUS when the operator has no URL. */
  readonly prometheus: MetricReader;
  /** Query used when `trigger.query` is empty; `{{namespace}}`/`{{name}}` are the target's. */
  readonly defaultQuery: string;
  /** Confine `trigger.query` to the target's namespace (`--confine-queries`, default true). */
  readonly confineQueries: boolean;
  /** Cost bounds on `trigger.query`, confined or not (default DEFAULT_QUERY_BOUNDS: 1h window, 10s step). */
  readonly queryBounds?: QueryBounds;
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
  let query = task.spec.trigger.query;
  if (query === undefined) {
    try {
      query = renderQuery(s.defaultQuery, { namespace: targetNs, name: task.spec.target.name });
    } catch (err) {
      return { ok: false, reason: 'QueryFailed', message: (err as Error).message };
    }
  } else {
    const { confineQuery, boundQuery } = await (confinement ??= import('./decision/confine.ts'));
    const bounds = s.queryBounds ?? DEFAULT_QUERY_BOUNDS;
    const checked = s.confineQueries ? confineQuery(query, targetNs, bounds) : boundQuery(query, bounds);
    if (!checked.ok) return { ok: false, reason: checked.reason, message: checked.message };
    query = checked.query;
  }
  return s.prometheus.query(query);
}
