// Assembles the operator: its telemetry, the apiserver transport, the work queue, the two
// caches (assembly-caches.ts), the reconciler and its controller (assembly-reconciler.ts),
// leader election and the HTTP endpoints, each added to the process' manager as a runnable
// with its place in the start and stop order (assembly-parts.ts). The manager then starts
// them: endpoints and caches at once, reconciling when (or if) leader; and stops them
// gracefully (stop taking work, finish in-flight reconciles and the sweep, release the Lease).

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import { AITaskClient } from '../api/aitask-client.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { KubeTransport } from '../lib/kube/transport.ts';
import type { Logger } from '../lib/log.ts';
import type { OperatorHealth } from './olm/operator-condition.ts';
import { RemediationSlots } from './decision/caps.ts';
import type { Defaults } from './decision/decide.ts';
import type { QueryBounds } from './decision/query-cost.ts';
import { CircuitBreaker, type AllowRule } from './llm/policy.ts';
import { registerCacheMetrics } from './runtime/cache-metrics.ts';
import { Resources, type Lease } from './runtime/kinds.ts';
import { LeaderElector } from './runtime/leader.ts';
import type { Manager } from './runtime/manager.ts';
import { MetricsAuthorizer } from './runtime/metrics-auth.ts';
import { RateLimiter } from './runtime/ratelimit.ts';
import { startServers, type SecureMetrics, type Servers } from './runtime/server.ts';
import { WorkQueue } from './runtime/workqueue.ts';
import { createTelemetry } from './telemetry.ts';
import { buildCaches, type Caches } from './assembly-caches.ts';
import { cachesPart, controllerPart, leaderPart, markSweepPart, serversPart } from './assembly-parts.ts';
import { buildReconciler } from './assembly-reconciler.ts';

/** Everything `npm run operator` can be told (flags.ts and flags-serving.ts have the flags and defaults). */
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
  /**
   * Gets the metrics serving certificate and how it is renewed (operator/runtime/metrics-cert.ts);
   * called when the endpoints start, so making one overlaps the rest of the start.
   */
  readonly metricsTLS?: () => Promise<Pick<SecureMetrics, 'pair' | 'watch'>>;
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

/** The LLM advisor's limits (flags.ts documents each flag). */
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

/** An operator whose parts are added to a manager. */
export interface AssembledOperator {
  readonly identity: string;
  /** The replica's state now: leading once the Lease is held (at once without leader election) and until it stops, caches synced, a watch failing. */
  health(): OperatorHealth;
}

/** The replica's health from its caches and whether it leads. */
function healthOf(caches: Caches, leading: boolean): OperatorHealth {
  const all = Object.entries(caches.all);
  const failing = all
    .map(([kind, c]) => [kind, c.failing])
    .filter((f): f is [string, string] => f[1] !== undefined);
  return {
    leading,
    synced: all.every(([, c]) => c.settled),
    failing:
      failing.length > 0 ? failing.map(([kind, err]) => `watching ${kind}: ${err}`).join('; ') : undefined,
  };
}

/** Starts /metrics (TLS and token checks when secure), /healthz and /readyz (ready once the caches synced and what this process hosts serves). */
async function listen(
  o: OperatorOptions,
  transport: KubeTransport,
  registry: Registry,
  caches: Caches,
): Promise<Servers> {
  const tls = o.metricsSecure ? await o.metricsTLS?.() : undefined;
  const authorizer = new MetricsAuthorizer(transport);
  return startServers(
    {
      ready: () => Object.values(caches.all).every((c) => c.settled) && (o.hostedReady?.() ?? true),
      registry,
    },
    { host: o.metricsHost ?? o.bindAddress, port: o.metricsPort },
    { host: o.healthHost ?? o.bindAddress, port: o.healthPort },
    tls !== undefined
      ? {
          ...tls,
          authorize: (header, method, path, remote) => authorizer.check(header, method, path, remote),
        }
      : undefined,
  );
}

/** The lines an operator says once its endpoints listen. */
function logListening(o: OperatorOptions, servers: Servers, identity: string): void {
  if (o.prometheusUrl === undefined)
    o.log.warn('no Prometheus URL: every AITask reports MetricsAvailable=False until one is set', {
      set: 'AIOPS_PROMETHEUS_URL or --prometheus-url',
    });
  o.log.info('serving endpoints', {
    metricsPort: servers.metricsPort,
    metricsScheme: o.metricsSecure ? 'https' : 'http',
    healthPort: servers.healthPort,
    identity,
  });
}

/** The Lease elector with --leader-elect; undefined without. */
function electorOf(
  o: OperatorOptions,
  transport: KubeTransport,
  identity: string,
): LeaderElector | undefined {
  if (!o.leaderElect) return undefined;
  return new LeaderElector({
    leases: new ResourceClient<Lease>(transport, Resources.leases),
    namespace: o.leaderElectionNamespace,
    name: o.leaderElectionId,
    identity,
    leaseDurationMs: o.leaseDurationMs,
    renewDeadlineMs: o.renewDeadlineMs,
    retryPeriodMs: o.retryPeriodMs,
    log: o.log,
  });
}

/**
 * Builds the operator and adds its parts to `manager` (which the caller starts). Throws when
 * `metricsSecure` comes without `metricsTLS`, or the kubeconfig cannot be read.
 */
export async function assembleOperator(o: OperatorOptions, manager: Manager): Promise<AssembledOperator> {
  const log = o.log;
  if (o.metricsSecure && o.metricsTLS === undefined)
    throw new Error('--metrics-secure needs a serving certificate (metricsTLS), and none was given');
  const slots = new RemediationSlots(o.maxConcurrentRemediations, o.maxConcurrentRemediationsPerNamespace);
  const breaker = new CircuitBreaker(o.llm.failureThreshold, o.llm.circuitCoolOffMs);
  const telemetry = createTelemetry({
    remediations: () => slots.holders().length,
    stalledTasks: () => parts.reconciler.stalledCount(),
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
  const tasks = new AITaskClient(transport, 'v2');
  const namespace = o.namespace !== undefined ? { namespace: o.namespace } : {};
  const caches = buildCaches({
    tasks,
    transport,
    queue,
    log,
    ...namespace,
    ...(o.watchLabelSelector !== undefined ? { watchLabelSelector: o.watchLabelSelector } : {}),
    allowCrossNamespace: o.allowCrossNamespace,
    onTaskDeleted: () => sweep.soon(),
  });
  registerCacheMetrics(telemetry.registry, caches.all);
  const elector = electorOf(o, transport, identity);
  const leading = (): boolean => elector === undefined || elector.leading;
  const parts = buildReconciler(o, {
    transport,
    tasks,
    caches,
    queue,
    slots,
    breaker,
    telemetry,
    identity,
    leading,
  });
  const { actions, events } = parts;
  const sweep = markSweepPart(
    { actions, tasks, taskCache: caches.taskCache, events, log, ...namespace },
    o.cordonMarkSweepMs,
  );
  let acquired = false;
  const metric = o.leaderElect ? telemetry.leaderElection(o.leaderElectionId) : undefined;
  manager
    .add(
      serversPart(
        () => listen(o, transport, telemetry.registry, caches),
        (s) => logListening(o, s, identity),
      ),
    )
    .add(cachesPart(caches, log))
    .add(
      leaderPart(elector, {
        lease: `${o.leaderElectionNamespace}/${o.leaderElectionId}`,
        ...(metric !== undefined ? { metric } : {}),
        onLeading: () => (acquired = true),
        log,
      }),
    )
    .add(controllerPart(parts.controller, caches))
    .add(sweep);
  return { identity, health: () => healthOf(caches, acquired && !manager.stopping) };
}
