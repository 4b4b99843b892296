// reconcile(key) for one AITask, level-triggered and idempotent: read the cached object →
// finalizer cleanup on deletion → ensure the finalizer → record the spec revision → resolve
// the target → read the metric → decide (pure) → act → write status through the status
// subresource → requeue after intervalSeconds. When the computed status equals the stored
// one nothing is written and no Event is recorded.

import { isDeepStrictEqual } from 'node:util';
import type { AITaskClient } from '../api/aitask-client.ts';
import { FINALIZER } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { Actions } from './actions.ts';
import { decide, type Defaults, type MetricObservation, type TargetObservation } from './decide.ts';
import type { EventRecorder } from './events.ts';
import type { History } from './history.ts';
import type { Informer } from './informer.ts';
import type { Deployment } from './kinds.ts';
import type { Logger } from '../api/log.ts';
import { renderQuery, type PrometheusClient } from './prometheus.ts';
import { evaluate, recordOutcome, settleInterrupted, type EventSpec } from './status.ts';
import type { Telemetry } from './telemetry.ts';

/** What reconcile asks the controller to do next. */
export interface Result {
  /** Evaluate again after this many ms (unset: only on the next change). */
  readonly requeueAfterMs?: number;
}

/** Everything reconcile reads from and writes to. */
export interface ReconcilerDeps {
  readonly tasks: AITaskClient;
  readonly taskCache: Informer<v2.AITask>;
  readonly deployments: Informer<Deployment>;
  readonly prometheus: PrometheusClient;
  readonly actions: Actions;
  readonly events: EventRecorder;
  readonly history: History;
  readonly telemetry: Telemetry;
  readonly log: Logger;
  readonly defaults: Defaults;
  /** Query used when `trigger.query` is empty; `{{namespace}}`/`{{name}}` are the target's. */
  readonly defaultQuery: string;
  /** Allow targets outside the AITask's namespace (default false: refused). */
  readonly allowCrossNamespace: boolean;
  /** Clock in ms (default Date.now). */
  readonly now?: () => number;
  /** Id for a new decision (default random UUID). */
  readonly newId?: () => string;
}

/** The reconciler of AITasks. */
export class Reconciler {
  readonly #d: ReconcilerDeps;

  constructor(deps: ReconcilerDeps) {
    this.#d = deps;
  }

  /** Reconciles the AITask `namespace/name`. Throws on API errors (the controller retries with backoff). */
  async reconcile(key: string): Promise<Result> {
    const d = this.#d;
    const cached = d.taskCache.get(key);
    if (!cached) return {};
    const log = d.log.with({ key });
    const [namespace = '', name = ''] = key.split('/');
    if (cached.metadata.deletionTimestamp !== undefined) {
      await this.#finalize(cached, log);
      return {};
    }
    let task = cached;
    if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) {
      task = await d.tasks.addFinalizer(namespace, name);
      log.info('finalizer added');
    }
    if (task.status?.pendingDecision !== undefined)
      task = await this.#settle(await d.tasks.get(namespace, name), log);
    if (task.status?.observedGeneration !== task.metadata.generation) await d.history.record(task);

    const now = (d.now ?? Date.now)();
    const intervalMs = (task.spec.intervalSeconds ?? d.defaults.intervalSeconds) * 1000;
    const targetNs = task.spec.target.namespace ?? namespace;
    const deployment = d.deployments.get(`${targetNs}/${task.spec.target.name}`);
    const target = this.#target(task, targetNs, deployment);
    const metric = await this.#metric(task, target, targetNs);
    const verdict = decide(task, target, metric, now, d.defaults);
    const ev = evaluate(task, verdict, now, (d.newId ?? (() => crypto.randomUUID()))(), intervalMs);

    if (ev.act === undefined || deployment === undefined) {
      if (!isDeepStrictEqual(task.status ?? {}, ev.status)) {
        await this.#writeStatus(task, ev.status, ev.events, log);
        log.info('status updated', { phase: ev.status.phase, verdict: verdict.kind });
      }
      return { requeueAfterMs: ev.requeueAfterMs };
    }
    const { decision, plan } = ev.act;
    task = await this.#writeStatus(task, ev.status, ev.events, log);
    log.info('acting', { action: plan.action, decision: decision.id });
    let outcome;
    try {
      outcome = await d.actions.run(plan, deployment);
    } catch (err) {
      outcome = {
        executed: false as const,
        blockedBy: 'ActionFailed' as const,
        message: `${plan.action} failed: ${(err as Error).message}`,
      };
    }
    d.telemetry.actions.inc({
      action: plan.action,
      outcome: outcome.executed ? 'executed' : outcome.blockedBy === 'ActionFailed' ? 'failed' : 'blocked',
    });
    const after = recordOutcome(task, task.status ?? {}, decision, plan, outcome, (d.now ?? Date.now)());
    await this.#writeStatus(task, after.status, after.events, log);
    log.info('action finished', {
      action: plan.action,
      executed: outcome.executed,
      message: outcome.message,
    });
    return { requeueAfterMs: ev.requeueAfterMs };
  }

  #target(task: v2.AITask, targetNs: string, deployment: Deployment | undefined): TargetObservation {
    const ref = `Deployment ${targetNs}/${task.spec.target.name}`;
    if (targetNs !== task.metadata.namespace && !this.#d.allowCrossNamespace)
      return {
        found: false,
        reason: 'CrossNamespaceRefused',
        message: `${ref} is in another namespace; the operator runs without --allow-cross-namespace`,
      };
    if (!deployment) return { found: false, reason: 'TargetNotFound', message: `${ref} does not exist` };
    return { found: true, replicas: deployment.spec?.replicas ?? 1 };
  }

  async #metric(
    task: v2.AITask,
    target: TargetObservation,
    targetNs: string,
  ): Promise<MetricObservation | undefined> {
    if (task.spec.paused === true || !target.found) return undefined;
    let query = task.spec.trigger.query;
    if (query === undefined) {
      try {
        query = renderQuery(this.#d.defaultQuery, { namespace: targetNs, name: task.spec.target.name });
      } catch (err) {
        return { ok: false, reason: 'QueryFailed', message: (err as Error).message };
      }
    }
    return this.#d.prometheus.query(query);
  }

  /** PUT of the status subresource, bound to `task`'s resourceVersion; then its Events. */
  async #writeStatus(
    task: v2.AITask,
    status: v2.Status,
    events: readonly EventSpec[],
    log: Logger,
  ): Promise<v2.AITask> {
    const written = await this.#d.tasks.replaceStatus({ ...task, status });
    this.#d.telemetry.statusWrites.inc();
    log.debug('status written', { resourceVersion: written.metadata.resourceVersion });
    await this.#d.events.record(task, events);
    return written;
  }

  /** A pendingDecision on the live object means an earlier run stopped mid-action: record it, never repeat it. */
  async #settle(live: v2.AITask, log: Logger): Promise<v2.AITask> {
    const settled = settleInterrupted(live);
    if (!settled) return live;
    log.warn('found an interrupted decision; recording it without repeating the action', {
      decision: live.status?.pendingDecision?.id,
    });
    return this.#writeStatus(live, settled.status, settled.events, log);
  }

  async #finalize(task: v2.AITask, log: Logger): Promise<void> {
    if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) return;
    const nodes = task.status?.cordonedNodes ?? [];
    for (const node of nodes) await this.#d.actions.uncordon(node);
    if (nodes.length > 0)
      await this.#d.events.record(task, [
        { type: 'Normal', reason: 'Uncordoned', action: 'Finalize', note: `uncordoned ${nodes.join(', ')}` },
      ]);
    await this.#d.tasks.removeFinalizer(task.metadata.namespace ?? '', task.metadata.name ?? '');
    log.info('finalizer removed', { uncordoned: nodes });
  }
}
