// The operator's Prometheus metrics (prom-client): reconcile totals, errors and durations,
// work-queue depth, actions by type and outcome, remediations in flight, LLM calls by
// outcome, LLM call latency and tokens by model, status writes, leadership, plus the
// standard process metrics (RSS, heap, event-loop lag).

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DecisionLLMCall } from '../api/schema/v2.ts';
import type { ControllerMetrics } from './runtime/controller.ts';

/**
 * Distinct `model` label values the LLM metrics keep: 20. The model is named in AITask specs,
 * so any tenant could otherwise grow the series without bound; calls naming a model beyond
 * the first 20 seen are counted under MODEL_OVERFLOW.
 */
export const MAX_MODEL_LABELS = 20;
/** The `model` label of calls past MAX_MODEL_LABELS distinct models. */
export const MODEL_OVERFLOW = '_other';

/** The label for `model`, given the models already labelled (`seen`, updated); pure but for `seen`. */
export function modelLabel(model: string, seen: Set<string>, max: number = MAX_MODEL_LABELS): string {
  if (seen.has(model)) return model;
  if (seen.size >= max) return MODEL_OVERFLOW;
  seen.add(model);
  return model;
}

/** Every metric the operator exports, on its own registry: the controller's and its own. */
export interface Telemetry extends ControllerMetrics {
  readonly registry: Registry;
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
  /** 1 while this process holds the leader Lease. */
  readonly leader: Gauge;
}

/**
 * Creates the metrics; `queueDepth`, `inFlight` and `remediations` (AITasks holding a
 * remediation slot) are read at scrape time.
 */
export function createTelemetry(
  queueDepth: () => number,
  inFlight: () => number,
  remediations: () => number = () => 0,
): Telemetry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'aiops_' });
  new Gauge({
    name: 'aiops_workqueue_depth',
    help: 'Keys waiting in the work queue',
    registers: [registry],
    collect(): void {
      this.set(queueDepth());
    },
  });
  new Gauge({
    name: 'aiops_workqueue_in_flight',
    help: 'Keys being reconciled',
    registers: [registry],
    collect(): void {
      this.set(inFlight());
    },
  });
  new Gauge({
    name: 'aiops_remediations_in_flight',
    help: 'AITasks with a remediation under way (held against --max-concurrent-remediations)',
    registers: [registry],
    collect(): void {
      this.set(remediations());
    },
  });
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
  const models = new Set<string>();
  return {
    registry,
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
    reconciles: new Counter({
      name: 'aiops_reconcile_total',
      help: 'Reconciles by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'aiops_reconcile_errors_total',
      help: 'Reconcile errors by class',
      labelNames: ['class'],
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'aiops_reconcile_duration_seconds',
      help: 'Reconcile wall time',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60],
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
    leader: new Gauge({
      name: 'aiops_leader',
      help: '1 while this process is the leader',
      registers: [registry],
    }),
  };
}
