// The operator's Prometheus metrics (prom-client), on one registry: controller-runtime's
// standard series under their own names (runtime/metrics.ts: reconciles, work queue, apiserver
// requests, leader election), the process and Node.js series every Prometheus client exports
// (process_*, nodejs_*, unprefixed), and our domain series (aiops_*): actions by type and
// outcome, guardrail refusals, remediations in flight, AITasks Stalled, LLM circuit breakers
// open, LLM calls by outcome, LLM call latency and tokens by model, status writes, evaluation
// lateness. README's Metrics table lists them (metrics-doc.ts); the shipped alerts and
// dashboard read them (scripts/monitoring/).

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestResult } from '../lib/kube/transport.ts';
import type { DecisionLLMCall } from '../api/schema/v2.ts';
import {
  controllerMetrics,
  leaderElectionMetrics,
  restClientMetrics,
  WorkQueueMetrics,
  type ControllerMetrics,
  type LeaderMetric,
} from './runtime/metrics.ts';

/**
 * How often the nodejs_eventloop_lag_* series sample the event loop's delay, in ms. prom-client's
 * default, 10 ms, is a timer waking the process 100 times a second whatever it does, a CPU cost
 * of the order of a steady state's (docs/benchmarks.md). Every 100 ms still
 * catches a blocked loop within a scrape interval.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** The controller's name in the standard series' `controller` and `name` labels, as controller-runtime names a controller of the AITask kind. */
export const CONTROLLER_NAME = 'aitask';

/**
 * Distinct `model` label values the LLM metrics keep: 20. The model is named in AITask specs,
 * so any tenant could otherwise grow the series without bound; calls naming a model beyond
 * the first 20 seen are counted under MODEL_OVERFLOW.
 */
export const MAX_MODEL_LABELS = 20;
/** The `model` label of calls past MAX_MODEL_LABELS distinct models. */
export const MODEL_OVERFLOW = '_other';

/** Longest model name kept as a `model` label value (characters): 128; longer ones are MODEL_OVERFLOW. */
export const MAX_MODEL_LABEL_CHARS = 128;

/**
 * The label for `model`, given the models already labelled (`seen`, updated); pure but for
 * `seen`. At most `max` distinct values, each at most MAX_MODEL_LABEL_CHARS long; the rest are
 * MODEL_OVERFLOW, so the label's values are a closed set whatever the specs name.
 */
export function modelLabel(model: string, seen: Set<string>, max: number = MAX_MODEL_LABELS): string {
  if (seen.has(model)) return model;
  if (seen.size >= max || model.length > MAX_MODEL_LABEL_CHARS) return MODEL_OVERFLOW;
  seen.add(model);
  return model;
}

/**
 * Buckets of aiops_evaluation_lateness_seconds, in seconds: 5 ms to 5 min, so an evaluation a
 * whole 10 s interval late (the shortest intervalSeconds) still falls in a bucket below the top.
 */
export const LATENESS_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300,
] as const;

/** Every metric the operator exports, on its own registry: the controller's and its own. */
export interface Telemetry {
  readonly registry: Registry;
  /** controller_runtime_* of the AITask controller (runtime/controller.ts's `metrics`). */
  readonly controller: ControllerMetrics;
  /** workqueue_*{name="aitask",controller="aitask"} (runtime/workqueue.ts's `observer`). */
  readonly queue: WorkQueueMetrics;
  /** rest_client_requests_total (the transport's `onResult`). */
  readonly restClient: (result: RequestResult) => void;
  /** leader_election_master_status{name=<lease>}; created (reading 0) with leader election only, as controller-runtime does. */
  readonly leaderElection: (lease: string) => LeaderMetric;
  /** Actions by type (RestartPod, ScaleUp, …) and outcome (executed, blocked, failed). */
  readonly actions: Counter<'action' | 'outcome'>;
  /** LLM advisor outcomes: advice, or the failure reason (LLMTimeout, LLMEndpointNotAllowed, …). */
  readonly llmCalls: Counter<'outcome'>;
  /** Wall time of each LLM call that went out, in seconds, by model (MAX_MODEL_LABELS at most). */
  readonly llmCallDuration: Histogram<'model'>;
  /** Tokens the LLM servers reported, by model and kind (prompt, completion). */
  readonly llmTokens: Counter<'model' | 'kind'>;
  /** Records one LLM call that went out in llmCallDuration and llmTokens. */
  readonly llmCall: (call: DecisionLLMCall) => void;
  /** Guardrail refusals by reason (ConcurrencyCapReached, CordonCapReached, DuplicateTarget, …). */
  readonly refusals: Counter<'reason'>;
  /** Writes of AITask status (the steady state should add none). */
  readonly statusWrites: Counter;
}

/** State the gauges read at each scrape (each default: always 0). */
export interface Readings {
  /** AITasks holding a remediation slot. */
  readonly remediations?: () => number;
  /** AITasks this process last judged Stalled (Reconciler.stalledCount), never a status read back. */
  readonly stalledTasks?: () => number;
  /** LLM circuit breakers open now (CircuitBreaker.openCount). */
  readonly openBreakers?: () => number;
}

/**
 * Creates the metrics, the gauges of `readings` read at scrape time; `now` is the work queue
 * metrics' clock in ms (default performance.now).
 */
export function createTelemetry(readings: Readings = {}, now?: () => number): Telemetry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const gauge = (name: string, help: string, read: (() => number) | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect(): void {
        this.set(read?.() ?? 0);
      },
    });
  };
  gauge(
    'aiops_remediations_in_flight',
    'AITasks with a remediation under way (held against --max-concurrent-remediations)',
    readings.remediations,
  );
  gauge(
    'aiops_tasks_stalled',
    "AITasks this operator last judged Stalled (its own verdicts, never a status someone else wrote): it stopped acting on them until a person fixes what the condition's reason names",
    readings.stalledTasks,
  );
  gauge(
    'aiops_llm_circuit_breakers_open',
    'LLM circuit breakers (endpoint, model, namespace) open now: their calls are refused until the cool-off (--llm-circuit-cooloff) ends',
    readings.openBreakers,
  );
  const llmCallDuration = new Histogram({
    name: 'aiops_llm_call_duration_seconds',
    help: 'Wall time of LLM calls that went out (retries within a call included), by model',
    labelNames: ['model'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const llmTokens = new Counter({
    name: 'aiops_llm_tokens_total',
    help: 'Tokens LLM servers reported in usage, by model and kind (prompt, completion)',
    labelNames: ['model', 'kind'],
    registers: [registry],
  });
  const lateness = new Histogram({
    name: 'aiops_evaluation_lateness_seconds',
    help: "How late AITask evaluations start against their due time (the previous evaluation's end plus the requeue interval it asked for): timer and work queue delays together",
    buckets: [...LATENESS_BUCKETS],
    registers: [registry],
  });
  const models = new Set<string>();
  return {
    registry,
    controller: controllerMetrics(registry, CONTROLLER_NAME),
    queue: new WorkQueueMetrics(registry, CONTROLLER_NAME, now, (s) => lateness.observe(s)),
    restClient: restClientMetrics(registry),
    leaderElection: leaderElectionMetrics(registry),
    llmCallDuration,
    llmTokens,
    llmCall: (call: DecisionLLMCall): void => {
      const model = modelLabel(call.model, models);
      llmCallDuration.observe({ model }, call.latencyMs / 1000);
      if (call.promptTokens !== undefined) llmTokens.inc({ model, kind: 'prompt' }, call.promptTokens);
      if (call.completionTokens !== undefined)
        llmTokens.inc({ model, kind: 'completion' }, call.completionTokens);
    },
    llmCalls: new Counter({
      name: 'aiops_llm_calls_total',
      help: 'LLM advisor outcomes: advice, or why there was none',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'aiops_guardrail_refusals_total',
      help: 'Actions refused by a guardrail, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    actions: new Counter({
      name: 'aiops_actions_total',
      help: 'Remediation actions by type and outcome',
      labelNames: ['action', 'outcome'],
      registers: [registry],
    }),
    statusWrites: new Counter({
      name: 'aiops_status_writes_total',
      help: 'AITask status writes',
      registers: [registry],
    }),
  };
}
