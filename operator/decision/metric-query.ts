// Which query the operator sends for an AITask's metric: the default template rendered for
// the target, or the task's own `trigger.query` confined to the target's namespace and held
// to the cost bounds (confine.ts, query-cost.ts), or why it sends none. One function for the
// reconcile (observe.ts, which sends it) and `kubectl aiops simulate` (which sends it as a
// range query), so both refuse the same queries with the same reason. Pure but for loading
// the PromQL parser on first use.

import { builtinKind } from '../../api/schema/target.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { DEFAULT_QUERY_BOUNDS, type QueryBounds } from './query-cost.ts';

/** Placeholders of the default query template. */
export interface QueryTarget {
  readonly namespace: string;
  readonly name: string;
  /**
   * The target's cached kind, which says how its pods are named ({{pods}}); default
   * Deployment; 'other' for a kind read through /scale.
   */
  readonly kind?: v2.TargetKind | 'other';
}

/**
 * The regular expression after a target's name that its pods' names match, by kind: a
 * Deployment's pods are `NAME-<ReplicaSet hash>-<random>`, a StatefulSet's `NAME-<ordinal>`;
 * another kind's pods are only known to start with `NAME-` (a task whose pods share that
 * prefix with another workload's brings its own trigger.query).
 */
export const POD_NAME_SUFFIX: Readonly<Record<v2.TargetKind | 'other', string>> = {
  Deployment: '-[a-z0-9]+-[a-z0-9]+',
  StatefulSet: '-[0-9]+',
  other: '-.+',
};

/** The operator's default query: CPU use of the target's pods in cores. */
export const DEFAULT_QUERY_TEMPLATE =
  'sum(rate(container_cpu_usage_seconds_total{namespace="{{namespace}}",pod=~"{{pods}}"}[5m]))';

/**
 * Renders a query template: `{{namespace}}` and `{{name}}` are the target's, `{{pods}}` the
 * regular expression its pods' names match (POD_NAME_SUFFIX). Throws on an unknown placeholder.
 */
export function renderQuery(template: string, target: QueryTarget): string {
  return template.replace(/\{\{\s*([a-zA-Z]+)\s*\}\}/g, (_, key: string) => {
    if (key === 'namespace') return target.namespace;
    if (key === 'name') return target.name;
    if (key === 'pods') return `${target.name}${POD_NAME_SUFFIX[target.kind ?? 'Deployment']}`;
    throw new Error(
      `unknown placeholder {{${key}}} in the query template (known: {{namespace}}, {{name}}, {{pods}})`,
    );
  });
}

/** How the operator chooses and checks a task's query (its flags). */
export interface QueryRules {
  /** Query used when `trigger.query` is empty; `{{namespace}}`/`{{name}}`/`{{pods}}` are the target's (renderQuery). */
  readonly defaultQuery: string;
  /** Confine `trigger.query` to the target's namespace (`--confine-queries`, default true). */
  readonly confineQueries: boolean;
  /** Cost bounds on `trigger.query`, confined or not (default DEFAULT_QUERY_BOUNDS: 1h window, 10s step). */
  readonly queryBounds?: QueryBounds;
}

/** The query to send, or why none is sent (the reason the task's status gives). */
export type MetricQuery =
  | { readonly ok: true; readonly query: string }
  | {
      readonly ok: false;
      readonly reason: 'QueryFailed' | 'QueryRefused' | 'QueryTooExpensive';
      readonly message: string;
    };

/**
 * The PromQL parser behind confineQuery, loaded with the first task that brings its own query:
 * decoding the grammar's tables at import costs every start CPU and an optimizing compile
 * (the node binary's compiler paged in: docs/benchmarks.md), though tasks on the default query
 * never parse PromQL.
 */
let confinement: Promise<typeof import('./confine.ts')> | undefined;

/**
 * The query for `task`'s metric, its target in `targetNs`: the default template rendered
 * (QueryFailed when it cannot be), or `trigger.query` confined when `rules.confineQueries`
 * (QueryRefused when it may not be) and within the cost bounds (QueryTooExpensive).
 */
export async function metricQuery(
  task: Pick<v2.AITask, 'spec'>,
  targetNs: string,
  rules: QueryRules,
): Promise<MetricQuery> {
  const own = task.spec.trigger.query;
  if (own === undefined) {
    try {
      return {
        ok: true,
        query: renderQuery(rules.defaultQuery, {
          namespace: targetNs,
          name: task.spec.target.name,
          kind: builtinKind(task.spec.target) ?? 'other',
        }),
      };
    } catch (err) {
      return { ok: false, reason: 'QueryFailed', message: (err as Error).message };
    }
  }
  const { confineQuery, boundQuery } = await (confinement ??= import('./confine.ts'));
  const bounds = rules.queryBounds ?? DEFAULT_QUERY_BOUNDS;
  const checked = rules.confineQueries ? confineQuery(own, targetNs, bounds) : boundQuery(own, bounds);
  return checked.ok
    ? { ok: true, query: checked.query }
    : { ok: false, reason: checked.reason, message: checked.message };
}
