// Assembles and runs the operator: informers (AITask v2, Deployments) feeding the work
// queue, the reconciler and its worker pool, the leader's sweep of stale cordon marks, leader
// election, the HTTP endpoints, and a graceful stop (stop taking work, finish in-flight
// reconciles and the sweep, release the Lease).

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import { AITaskClient } from '../api/aitask-client.ts';
import { APPROVE_ANNOTATION } from '../api/install.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { KubeTransport } from '../lib/kube/transport.ts';
import { targetKey } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { OperatorHealth } from './olm/operator-condition.ts';
import { Actions } from './edges/actions.ts';
import { Advisor } from './llm/advisor.ts';
import { RemediationSlots } from './decision/caps.ts';
import { CallBudget, CircuitBreaker, type AllowRule } from './llm/policy.ts';
import { Controller } from './runtime/controller.ts';
import type { Defaults } from './decision/decide.ts';
import { EventRecorder } from './edges/events.ts';
import { History } from './edges/history.ts';
import type { Refusal } from './runtime/cache-budget.ts';
import { registerCacheMetrics } from './runtime/cache-metrics.ts';
import { FAILING_AFTER, Informer, objectKey, type KubeObject } from './runtime/informer.ts';
import {
  DEPLOYMENT_CACHE_BYTES,
  DEPLOYMENT_NAMESPACE_CACHE_BYTES,
  DEPLOYMENT_PAGE_SIZE,
  MAX_CACHED_OBJECT_BYTES,
  selectorRefusal,
  TASK_PAGE_SIZE,
  trimDeployment,
  trimCustomObject,
} from './runtime/trim.ts';
import { Resources, type Deployment, type Lease } from './runtime/kinds.ts';
import { LeaderElector } from './runtime/leader.ts';
import type { Logger } from '../lib/log.ts';
import { NO_PROMETHEUS, PrometheusClient } from './edges/prometheus.ts';
import type { QueryBounds } from './decision/query-cost.ts';
import { RateLimiter } from './runtime/ratelimit.ts';
import { Reconciler } from './reconcile.ts';
import { startServers, type SecureMetrics } from './runtime/server.ts';
import { MetricsAuthorizer } from './runtime/metrics-auth.ts';
import { createTelemetry } from './telemetry.ts';
import { actionGate, parsePausePoints, PAUSE_ENV } from './action-gate.ts';
import { WorkQueue } from './runtime/workqueue.ts';
import { startMarkSweeper, type MarkSweeper } from './mark-sweep.ts';

/** Everything `npm run operator` can be told (command.ts has the flags and defaults). */
export interface OperatorOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  /** Prometheus' base URL; undefined: none, and every task says what to set (NO_PROMETHEUS). */
  readonly prometheusUrl: string | undefined;
  readonly defaultQuery: string;
  readonly allowCrossNamespace: boolean;
  readonly maxConcurrentReconciles: number;
  readonly rateLimitQps: number;
  readonly rateLimitBurst: number;
  /** Reconciles per second one namespace's patches (AITask spec/annotations, target Deployments) trigger; over it they are delayed. */
  readonly namespaceReconcileQps: number;
  /** Patch-triggered reconciles of one namespace let through at once before pacing. */
  readonly namespaceReconcileBurst: number;
  readonly defaults: Defaults;
  /** Cap on AITasks with a remediation under way (0: none). */
  readonly maxConcurrentRemediations: number;
  /** Cap on AITasks of one namespace with a remediation under way (0: none but the overall cap). */
  readonly maxConcurrentRemediationsPerNamespace: number;
  /**
   * Confine each `trigger.query` to the target's namespace (`namespace="…"` on every
   * selector; a query that cannot be confined is refused). Off only for single-tenant clusters.
   */
  readonly confineQueries: boolean;
  /** Cost bounds on each `trigger.query` (`--max-query-range`, `--min-query-resolution`; default DEFAULT_QUERY_BOUNDS). */
  readonly queryBounds?: QueryBounds;
  /** Share of nodes (percent) CordonNode may leave unschedulable. */
  readonly maxCordonedNodesPercent: number;
  /** Nodes the AITasks of one namespace may hold cordoned (0: only the share above). */
  readonly maxCordonedNodesPerNamespace: number;
  /** Time between sweeps of stale cordon marks, in ms (mark-sweep.ts). */
  readonly cordonMarkSweepMs: number;
  /** The LLM advisor's limits. */
  readonly llm: LLMOptions;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Port of /metrics (0: a free one). */
  readonly metricsPort: number;
  /** Port of /healthz and /readyz (0: a free one). */
  readonly healthPort: number;
  /** Address every endpoint listens on unless overridden below (and the hosted webhook's). */
  readonly bindAddress: string;
  /** Address /metrics listens on (default: bindAddress). */
  readonly metricsHost?: string;
  /** Address /healthz and /readyz listen on (default: bindAddress). */
  readonly healthHost?: string;
  /**
   * /metrics over HTTPS behind TokenReview and SubjectAccessReview (`--metrics-secure`,
   * default true); its certificate is `metricsTLS`, which the caller must then provide.
   */
  readonly metricsSecure: boolean;
  /** Directory of the metrics certificate (`--metrics-cert-path`; unset: self-signed at start). */
  readonly metricsCertPath?: string;
  /** Certificate and key file names in metricsCertPath (default tls.crt, tls.key). */
  readonly metricsCertName: string;
  readonly metricsCertKey: string;
  /** The metrics serving certificate, and how it is renewed (operator/runtime/metrics-cert.ts). */
  readonly metricsTLS?: Pick<SecureMetrics, 'pair' | 'watch'>;
  /** Metrics of a component this process hosts (the conversion webhook), served on /metrics beside the operator's; none by default. */
  readonly hostedMetrics?: Registry;
  /**
   * Whether a component this process hosts is serving yet (the conversion webhook, which
   * starts beside the operator): /readyz answers 200 only once it is and the caches synced.
   * Default: nothing hosted to wait for.
   */
  readonly hostedReady?: () => boolean;
  /** Watch only this namespace (default: all). */
  readonly namespace?: string;
  /** Reconcile only AITasks matching this label selector (default: all). */
  readonly watchLabelSelector?: string;
  readonly log: Logger;
}

/** The LLM advisor's limits (command.ts documents each flag). */
export interface LLMOptions {
  readonly allowlist: readonly AllowRule[];
  readonly apiKeyEnv?: string;
  readonly defaultModel: string;
  readonly maxCompletionTokens?: number;
  readonly temperature?: number;
  readonly callsPerHour: number;
  readonly taskCallsPerHour: number;
  readonly namespaceCallsPerHour: number;
  readonly failureThreshold: number;
  readonly circuitCoolOffMs: number;
  /** Longest an LLM call may take, in ms: caps each task's `llm.timeoutSeconds` (`--llm-max-timeout`). */
  readonly maxTimeoutMs: number;
}

/** A started operator. */
export interface RunningOperator {
  readonly identity: string;
  readonly metricsPort: number;
  readonly healthPort: number;
  /** Graceful stop; resolves when everything has ended. Idempotent. */
  stop(): Promise<void>;
  /** Resolves with an exit code when the operator ends on its own (lost leadership: 1). */
  readonly finished: Promise<number>;
  /** The replica's state now: leading once the Lease is held (at once without leader election), caches synced, a watch failing. */
  health(): OperatorHealth;
}

/** The AITask index of Deployment keys: the namespace/name each task targets. */
function targetKeys(task: v2.AITask): string[] {
  return [targetKey(task)];
}

/**
 * True when an AITask update needs a reconcile now: a spec change, a deletion, or finalizer
 * changes while deleting. Status writes and the operator's own finalizer patch do not; a
 * finalizer removed by someone else is put back at the next interval.
 */
function needsReconcile(oldT: v2.AITask, newT: v2.AITask): boolean {
  const a = oldT.metadata;
  const b = newT.metadata;
  return (
    a.generation !== b.generation ||
    a.annotations?.[APPROVE_ANNOTATION] !== b.annotations?.[APPROVE_ANNOTATION] ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    (b.deletionTimestamp !== undefined && (a.finalizers ?? []).join() !== (b.finalizers ?? []).join())
  );
}

/** Starts the operator: endpoints and caches at once, reconciling when (or if) leader. */
export async function startOperator(o: OperatorOptions): Promise<RunningOperator> {
  const log = o.log;
  const slots = new RemediationSlots(o.maxConcurrentRemediations, o.maxConcurrentRemediationsPerNamespace);
  const breaker = new CircuitBreaker(o.llm.failureThreshold, o.llm.circuitCoolOffMs);
  const telemetry = createTelemetry({
    remediations: () => slots.holders().length,
    stalledTasks: () => reconciler.stalledCount(),
    openBreakers: () => breaker.openCount(Date.now()),
  });
  for (const { name } of o.hostedMetrics?.getMetricsAsArray() ?? []) {
    const metric = o.hostedMetrics?.getSingleMetric(name);
    if (metric !== undefined) telemetry.registry.registerMetric(metric);
  }
  const transport = await KubeTransport.create({
    ...(o.kubeconfig !== undefined ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context !== undefined ? { context: o.context } : {}),
    onResult: telemetry.restClient,
  });
  const identity = `${process.env.POD_NAME ?? hostname()}_${randomBytes(4).toString('hex')}`;
  const queue = new WorkQueue({
    limiter: new RateLimiter({ qps: o.rateLimitQps, burst: o.rateLimitBurst }),
    namespaceQps: o.namespaceReconcileQps,
    namespaceBurst: o.namespaceReconcileBurst,
    observer: telemetry.queue,
  });
  // A watch that fails once or twice is an apiserver restarting or warming its watch cache
  // ("storage is (re)initializing"), which the informer rides out: said as a reconnect at info,
  // not as a failure (client-go's reflector logs those at V(4)). From FAILING_AFTER failures in
  // a row on, the cache serves stale data and each retry is a warning that the watch failed.
  const onError =
    (kind: string) =>
    (err: unknown, failuresInARow: number): void => {
      const fields = { resource: kind, error: (err as Error).message, failuresInARow };
      if (failuresInARow >= FAILING_AFTER) log.warn('watch failed, reconnecting', fields);
      else log.info('watch reconnecting', fields);
    };
  const tasks = new AITaskClient(transport, 'v2');
  // Caches keep only what the operator reads, and refuse objects still too large (trim.ts).
  const onRefused =
    (kind: string, then?: (obj: KubeObject) => void) =>
    (obj: KubeObject, bytes: number, refusal: Refusal): void => {
      if (refusal.reason === 'TooLarge')
        log.warn('object too large to cache; ignored until it shrinks', {
          resource: kind,
          key: objectKey(obj),
          bytes,
          maxBytes: MAX_CACHED_OBJECT_BYTES,
        });
      else
        log.warn('object not cached; ignored until it changes', {
          resource: kind,
          key: objectKey(obj),
          reason: refusal.reason,
          why: refusal.message,
        });
      then?.(obj);
    };
  const bounded = (
    kind: string,
    then?: (obj: KubeObject) => void,
  ): { maxObjectBytes: number; onRefused: (o: KubeObject, n: number, r: Refusal) => void } => ({
    maxObjectBytes: MAX_CACHED_OBJECT_BYTES,
    onRefused: onRefused(kind, then),
  });
  const taskCache = new Informer<v2.AITask>(tasks, {
    ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
    ...(o.watchLabelSelector !== undefined ? { labelSelector: o.watchLabelSelector } : {}),
    indexers: { target: targetKeys },
    transform: trimCustomObject([APPROVE_ANNOTATION]),
    ...bounded('aitasks'),
    pageSize: TASK_PAGE_SIZE,
    onError: onError('aitasks'),
    // The CRD may come after the operator (npm start installs it once the hosted webhook
    // answers; an install can race it): wait for it quietly, saying so once.
    onNotServed: () =>
      log.info('waiting for the AITask CRD to be served (aitasks.aiops.example.com v2)', {
        resource: 'aitasks',
      }),
  });
  // Deployments: pages whose worst case fits the heap, a selector no larger than a real one,
  // and a byte budget in all and per namespace; a refused one is said in the status of the
  // AITasks that target it (observe.ts), which are reconciled at once.
  const deployments = new Informer<Deployment>(new ResourceClient(transport, Resources.deployments), {
    ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
    transform: trimDeployment,
    admit: (d) => selectorRefusal(d.spec?.selector),
    ...bounded('deployments', (d) => enqueueTasksOf(d)),
    maxCacheBytes: DEPLOYMENT_CACHE_BYTES,
    maxNamespaceBytes: DEPLOYMENT_NAMESPACE_CACHE_BYTES,
    pageSize: DEPLOYMENT_PAGE_SIZE,
    onError: onError('deployments'),
  });
  registerCacheMetrics(telemetry.registry, { aitasks: taskCache, deployments });
  const sameTarget = (t: v2.AITask): string[] => {
    const [target = ''] = targetKeys(t);
    return taskCache.byIndex('target', target).filter((k) => k !== objectKey(t));
  };
  // The leader's sweep of stale cordon marks (mark-sweep.ts), started in lead().
  let sweeper: MarkSweeper | undefined;
  taskCache.on({
    add: (t) => queue.add(objectKey(t)),
    update: (a, b) => {
      if (needsReconcile(a, b)) queue.addEvent(objectKey(b));
    },
    delete: (t) => {
      queue.add(objectKey(t));
      for (const key of sameTarget(t)) queue.add(key);
      sweeper?.soon();
    },
  });
  const waitingForSlot = (waiting: readonly string[]): void => {
    for (const key of waiting) queue.add(key);
  };
  const enqueueTasksOf = (d: KubeObject): void => {
    for (const key of taskCache.byIndex('target', objectKey(d))) queue.addEvent(key);
  };
  deployments.on({
    add: enqueueTasksOf,
    delete: enqueueTasksOf,
    update: (a, b) => {
      if (a.spec?.replicas !== b.spec?.replicas) enqueueTasksOf(b);
    },
  });
  const pauseAt = parsePausePoints(process.env[PAUSE_ENV]);
  // Called only by reconciles, which start after `elector` below is set.
  const leading = (): boolean => elector === undefined || elector.leading;
  const actions = new Actions(transport, o.maxCordonedNodesPercent, o.maxCordonedNodesPerNamespace);
  const events = new EventRecorder(transport, identity, log);
  const reconciler = new Reconciler({
    gate: actionGate(leading, pauseAt, log),
    tasks,
    taskCache,
    deployments,
    prometheus:
      o.prometheusUrl === undefined ? NO_PROMETHEUS : new PrometheusClient({ url: o.prometheusUrl }),
    actions,
    advisor: new Advisor({
      allowlist: o.llm.allowlist,
      budget: new CallBudget(o.llm.taskCallsPerHour, o.llm.callsPerHour, o.llm.namespaceCallsPerHour),
      breaker,
      ...(o.llm.apiKeyEnv !== undefined ? { apiKeyEnv: o.llm.apiKeyEnv } : {}),
      ...(o.llm.maxCompletionTokens !== undefined ? { maxCompletionTokens: o.llm.maxCompletionTokens } : {}),
      ...(o.llm.temperature !== undefined ? { temperature: o.llm.temperature } : {}),
      defaultModel: o.llm.defaultModel,
      onOutcome: (outcome) => telemetry.llmCalls.inc({ outcome }),
      onCall: telemetry.llmCall,
    }),
    slots,
    onSlotFreed: waitingForSlot,
    events,
    history: new History(transport),
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
    reconcile: (key) => (leading() ? reconciler.reconcile(key) : Promise.resolve({})),
    metrics: telemetry.controller,
    log,
    maxConcurrentReconciles: o.maxConcurrentReconciles,
  });
  if (o.metricsSecure && o.metricsTLS === undefined)
    throw new Error('--metrics-secure needs a serving certificate (metricsTLS), and none was given');
  const authorizer = new MetricsAuthorizer(transport);
  const servers = await startServers(
    {
      ready: () => taskCache.synced && deployments.synced && (o.hostedReady?.() ?? true),
      registry: telemetry.registry,
    },
    { host: o.metricsHost ?? o.bindAddress, port: o.metricsPort },
    { host: o.healthHost ?? o.bindAddress, port: o.healthPort },
    o.metricsSecure && o.metricsTLS !== undefined
      ? {
          ...o.metricsTLS,
          authorize: (header, method, path, remote) => authorizer.check(header, method, path, remote),
        }
      : undefined,
  );
  if (o.prometheusUrl === undefined)
    log.warn('no Prometheus URL: every AITask reports MetricsAvailable=False until one is set', {
      set: 'AIOPS_PROMETHEUS_URL or --prometheus-url',
    });
  log.info('serving endpoints', {
    metricsPort: servers.metricsPort,
    metricsScheme: o.metricsSecure ? 'https' : 'http',
    healthPort: servers.healthPort,
    identity,
  });

  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((r) => (finish = r));
  const elector = o.leaderElect
    ? new LeaderElector({
        leases: new ResourceClient<Lease>(transport, Resources.leases),
        namespace: o.leaderElectionNamespace,
        name: o.leaderElectionId,
        identity,
        leaseDurationMs: o.leaseDurationMs,
        renewDeadlineMs: o.renewDeadlineMs,
        retryPeriodMs: o.retryPeriodMs,
        log,
      })
    : undefined;
  const leaderMetric = o.leaderElect ? telemetry.leaderElection(o.leaderElectionId) : undefined;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      log.info('stopping: finishing in-flight reconciles');
      await Promise.all([controller.stop(), sweeper?.stop()]);
      await elector?.release();
      leaderMetric?.off();
      await Promise.all([taskCache.stop(), deployments.stop(), servers.close()]);
      log.info('stopped');
    })());

  void Promise.all([taskCache.start(), deployments.start()]).then(() =>
    log.info('caches synced', { aitasks: taskCache.size, deployments: deployments.size }),
  );
  let acquired = false;
  const health = (): OperatorHealth => {
    const failing = [
      ['aitasks', taskCache.failing],
      ['deployments', deployments.failing],
    ].filter((f): f is [string, string] => f[1] !== undefined);
    return {
      leading: acquired && stopping === undefined,
      synced: taskCache.synced && deployments.synced,
      failing:
        failing.length > 0 ? failing.map(([kind, err]) => `watching ${kind}: ${err}`).join('; ') : undefined,
    };
  };
  const lead = async (): Promise<void> => {
    if (elector) {
      log.info('waiting for leadership', { lease: `${o.leaderElectionNamespace}/${o.leaderElectionId}` });
      await elector.acquire(() => {
        void stop().then(() => finish(1));
      });
    }
    leaderMetric?.on();
    acquired = true;
    await Promise.all([taskCache.waitForSync(), deployments.waitForSync()]);
    if (stopping !== undefined) return;
    controller.start();
    sweeper = startMarkSweeper(
      {
        actions,
        tasks,
        taskCache,
        events,
        log,
        ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
      },
      o.cordonMarkSweepMs,
    );
  };
  lead().catch((err: unknown) => {
    if (stopping === undefined) log.error('leader election failed', { error: (err as Error).message });
  });
  return {
    identity,
    metricsPort: servers.metricsPort,
    healthPort: servers.healthPort,
    stop,
    finished,
    health,
  };
}
