// The reconciler and the controller that runs it, as assembly.ts builds them: the edges it
// acts through (actions, Events, history, Prometheus, the LLM advisor), its limits from the
// options, and the worker pool that reconciles only while this replica leads.

import type { AITaskClient } from '../api/aitask-client.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import type { OperatorOptions } from './assembly.ts';
import type { Caches } from './assembly-caches.ts';
import { actionGate, parsePausePoints, PAUSE_ENV } from './action-gate.ts';
import type { RemediationSlots } from './decision/caps.ts';
import { Actions } from './edges/actions.ts';
import { EventRecorder } from './edges/events.ts';
import { History } from './edges/history.ts';
import { NO_PROMETHEUS, PrometheusClient } from './edges/prometheus.ts';
import { Advisor } from './llm/advisor.ts';
import { CallBudget, type CircuitBreaker } from './llm/policy.ts';
import { Reconciler } from './reconcile.ts';
import { Controller } from './runtime/controller.ts';
import type { WorkQueue } from './runtime/workqueue.ts';
import type { Telemetry } from './telemetry.ts';

/** What the reconciler is built from besides the options. */
export interface ReconcilerDeps {
  readonly transport: KubeTransport;
  readonly tasks: AITaskClient;
  readonly caches: Caches;
  readonly queue: WorkQueue;
  readonly slots: RemediationSlots;
  readonly breaker: CircuitBreaker;
  readonly telemetry: Telemetry;
  /** This replica's identity, the Events' reporting instance. */
  readonly identity: string;
  /** Whether this replica leads now (always, without leader election). */
  readonly leading: () => boolean;
}

/** The reconciler, its controller, and the edges the mark sweep shares with it. */
export interface ReconcilerParts {
  readonly reconciler: Reconciler;
  readonly controller: Controller;
  readonly actions: Actions;
  readonly events: EventRecorder;
}

/** Builds the reconciler and its controller (see the header). */
export function buildReconciler(o: OperatorOptions, d: ReconcilerDeps): ReconcilerParts {
  const { log } = o;
  const { telemetry, queue } = d;
  const actions = new Actions(
    d.transport,
    d.caches.discovery,
    o.maxCordonedNodesPercent,
    o.maxCordonedNodesPerNamespace,
  );
  const events = new EventRecorder(d.transport, d.identity, log);
  const reconciler = new Reconciler({
    gate: actionGate(d.leading, parsePausePoints(process.env[PAUSE_ENV]), log),
    tasks: d.tasks,
    taskCache: d.caches.taskCache,
    targets: d.caches.targets,
    prometheus:
      o.prometheusUrl === undefined ? NO_PROMETHEUS : new PrometheusClient({ url: o.prometheusUrl }),
    actions,
    advisor: new Advisor({
      allowlist: o.llm.allowlist,
      budget: new CallBudget(o.llm.taskCallsPerHour, o.llm.callsPerHour, o.llm.namespaceCallsPerHour),
      breaker: d.breaker,
      ...(o.llm.apiKeyEnv !== undefined ? { apiKeyEnv: o.llm.apiKeyEnv } : {}),
      ...(o.llm.maxCompletionTokens !== undefined ? { maxCompletionTokens: o.llm.maxCompletionTokens } : {}),
      ...(o.llm.temperature !== undefined ? { temperature: o.llm.temperature } : {}),
      defaultModel: o.llm.defaultModel,
      onOutcome: (outcome) => telemetry.llmCalls.inc({ outcome }),
      onCall: telemetry.llmCall,
    }),
    slots: d.slots,
    onSlotFreed: (waiting) => {
      for (const key of waiting) queue.add(key);
    },
    events,
    history: new History(d.transport),
    telemetry,
    log,
    defaults: o.defaults,
    defaultQuery: o.defaultQuery,
    allowCrossNamespace: o.allowCrossNamespace,
    confineQueries: o.confineQueries,
    ...(o.queryBounds !== undefined ? { queryBounds: o.queryBounds } : {}),
    llmMaxTimeoutMs: o.llm.maxTimeoutMs,
  });
  const controller = new Controller({
    queue,
    reconcile: (key) => (d.leading() ? reconciler.reconcile(key) : Promise.resolve({})),
    metrics: telemetry.controller,
    log,
    maxConcurrentReconciles: o.maxConcurrentReconciles,
  });
  return { reconciler, controller, actions, events };
}
