// The input paths the operator opens itself: queries to Prometheus and calls to an LLM
// endpoint, whose answers are as hostile as any request.

import { OFF_INTERVAL_CALLS, RECONCILE_TIME, type InputPath } from './inventory-budgets.ts';

/** Every outbound call of the operator. */
export const OUTBOUND_PATHS: readonly InputPath[] = [
  {
    id: 'prometheus',
    class: 'outbound',
    what: 'instant queries for each task’s metric',
    sites: ['operator/edges/prometheus.ts: http.get', 'operator/edges/prometheus.ts: https.get'],
    budgets: {
      bytes: 'an answer over 1 MiB fails that evaluation (MetricsUnavailable)',
      count: 'series per answer bounded by the query’s confinement to the target’s namespace',
      concurrency: 'one query per reconcile worker',
      rate: `one query per task interval, plus ${OFF_INTERVAL_CALLS} (otherwise the task’s last answer is reused); windows ≤ --max-query-range, steps ≥ --min-query-resolution`,
      time: `Prometheus’ own timeout 5 s; the client gives up at 5.5 s, the worker at 6 s; aborted ${RECONCILE_TIME}`,
      reach: 'the admin’s --prometheus-url only; the tenant writes the query, confined and costed',
    },
    enforcedIn: [
      'operator/edges/prometheus.ts',
      'operator/decision/confine.ts',
      'operator/decision/query-cost.ts',
      'operator/task-memory.ts',
      'operator/reconcile-budget.ts',
    ],
    provedBy: [
      'operator/edges/prometheus.test.ts',
      'operator/reconcile-budget.test.ts',
      'test/attacks/promql-cost.test.ts',
      'test/attacks/reads.test.ts',
    ],
  },
  {
    id: 'llm',
    class: 'outbound',
    what: 'chat completions to an allow-listed LLM endpoint, in LLM mode',
    sites: ['operator/llm/advisor.ts: fetch'],
    budgets: {
      bytes: 'an answer over 1 MiB fails the call; completion tokens capped per request',
      count: 'one answer per call, parsed strictly',
      concurrency: 'one call per reconcile worker',
      rate: `--llm-namespace-calls-per-hour per namespace; a circuit breaker per endpoint, model and namespace; off the interval also ${OFF_INTERVAL_CALLS}`,
      time: 'the task’s timeoutSeconds capped by --llm-max-timeout; the worker stops waiting 1 s later',
      reach: 'endpoints the admin allow-lists (scheme, host, port and path prefix)',
    },
    enforcedIn: ['operator/llm/advisor.ts', 'operator/llm/policy.ts'],
    provedBy: [
      'test/attacks/llm-budget.test.ts',
      'test/attacks/shares.test.ts',
      'operator/llm/policy.test.ts',
    ],
  },
];
