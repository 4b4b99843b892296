// The metrics every controller-runtime operator exposes, under controller-runtime's names,
// types, label names, help texts and buckets, so stock dashboards and alerts work on this
// operator unchanged: the controller's (controller_runtime_reconcile_total, …_errors_total,
// …_time_seconds, …_max_concurrent_reconciles, …_active_workers; controller-runtime's
// pkg/internal/controller/metrics), the work queue's (workqueue_*{name,controller}: client-go's
// defaultQueueMetrics as controller-runtime's pkg/internal/metrics/workqueue.go registers them),
// the apiserver client's (rest_client_requests_total{code,method,host}: pkg/metrics/
// client_go_adapter.go) and leader election's (leader_election_master_status{name}:
// pkg/metrics/leaderelection.go). Nothing here knows of AITasks; the controller name is given.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RequestResult } from '../../lib/kube/transport.ts';

/** controller-runtime's controller_runtime_reconcile_time_seconds buckets, in seconds (5 ms … 60 s). */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/**
 * The work queue's duration buckets, in seconds: Go's `prometheus.ExponentialBuckets(10e-9, 10, 12)`
 * (10 ns … 1000 s), computed as Go does (repeated multiplication), so the bounds are the same doubles.
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = (() => {
  const buckets: number[] = [];
  let start = 10e-9;
  for (let i = 0; i < 12; i++) {
    buckets.push(start);
    start *= 10;
  }
  return buckets;
})();

/** Results of controller_runtime_reconcile_total, as controller-runtime labels them. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';
const RESULTS: readonly ReconcileResult[] = ['error', 'requeue_after', 'requeue', 'success'];

/** What the controller records of its reconciles (controller.ts). */
export interface ControllerMetrics {
  /** Sets the series to zero and max_concurrent_reconciles to `workers`, as controller-runtime does when a controller starts. */
  started(workers: number): void;
  /** A worker took a key (active_workers + 1). */
  workerBusy(): void;
  /** A worker finished a key (active_workers − 1). */
  workerIdle(): void;
  /**
   * One reconcile ended after `seconds`: `result`, and for an error whether no retry can fix it
   * (`terminal`) and whether it was a programming error, Node's panic (`panic`).
   */
  reconciled(seconds: number, result: ReconcileResult, error?: { terminal: boolean; panic: boolean }): void;
}

/** The controller_runtime_* series of one controller on `registry`. */
export function controllerMetrics(registry: Registry, controller: string): ControllerMetrics {
  const registers = [registry];
  const labelNames = ['controller'] as const;
  const total = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
    registers,
  });
  const errors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames,
    registers,
  });
  const terminal = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames,
    registers,
  });
  const panics = new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliation panics per controller',
    labelNames,
    registers,
  });
  const time = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames,
    buckets: [...RECONCILE_TIME_BUCKETS],
    registers,
  });
  const workers = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames,
    registers,
  });
  const active = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames,
    registers,
  });
  const l = { controller };
  return {
    started(n) {
      for (const result of RESULTS) total.inc({ controller, result }, 0);
      for (const c of [errors, terminal, panics]) c.inc(l, 0);
      workers.set(l, n);
      active.set(l, 0);
    },
    workerBusy: () => active.inc(l),
    workerIdle: () => active.dec(l),
    reconciled(seconds, result, error) {
      time.observe(l, seconds);
      total.inc({ controller, result });
      if (error === undefined) return;
      errors.inc(l);
      if (error.terminal) terminal.inc(l);
      if (error.panic) panics.inc(l);
    },
  };
}

/**
 * What the work queue reports (workqueue.ts), client-go's queue metrics hooks: `add` when a
 * key becomes dirty (queued, or waiting for its worker to finish), `get` when a worker takes
 * it, `done` when the worker is finished, `retry` for each delayed or rate-limited add,
 * `late` when a worker takes a key a requeue made due (seconds past its due time, ≥ 0), and
 * `shutDown` when the queue drops what it held.
 */
export interface QueueObserver {
  add(key: string): void;
  get(key: string): void;
  done(key: string): void;
  retry(): void;
  late?(seconds: number): void;
  shutDown(): void;
}

/**
 * client-go's defaultQueueMetrics for one queue, on `registry` under controller-runtime's
 * names and labels (`name` and `controller` both the controller's name): depth, adds,
 * queue and work durations (observed on `get` and `done`), retries, and the unfinished work
 * and longest-running processor, computed at each scrape from when the keys in flight were
 * taken (client-go refreshes them every 500 ms). `now` is a clock in ms (default
 * performance.now), injectable for tests.
 */
export class WorkQueueMetrics implements QueueObserver {
  readonly #labels: { name: string; controller: string };
  readonly #now: () => number;
  readonly #addTimes = new Map<string, number>();
  readonly #processingStart = new Map<string, number>();
  readonly #depth: Gauge<'name' | 'controller'>;
  readonly #adds: Counter<'name' | 'controller'>;
  readonly #latency: Histogram<'name' | 'controller'>;
  readonly #workDuration: Histogram<'name' | 'controller'>;
  readonly #retries: Counter<'name' | 'controller'>;
  readonly #onLate: ((seconds: number) => void) | undefined;

  /**
   * Registers the workqueue_* series of the queue `name` on `registry`; `onLate` is given
   * each requeued key's lateness in seconds (QueueObserver's `late`; default: dropped).
   */
  constructor(
    registry: Registry,
    name: string,
    now: () => number = () => performance.now(),
    onLate?: (seconds: number) => void,
  ) {
    const labels = { name, controller: name };
    this.#labels = labels;
    this.#now = now;
    this.#onLate = onLate;
    const registers = [registry];
    const labelNames = ['name', 'controller'] as const;
    this.#depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames,
      registers,
    });
    this.#adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
      registers,
    });
    this.#latency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
      registers,
    });
    this.#workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
      registers,
    });
    const inFlightAges = (): number[] => {
      const now = this.#now();
      return [...this.#processingStart.values()].map((t) => (now - t) / 1000);
    };
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames,
      registers,
      collect() {
        this.set(
          labels,
          inFlightAges().reduce((a, b) => a + b, 0),
        );
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      registers,
      collect() {
        this.set(labels, Math.max(0, ...inFlightAges()));
      },
    });
    this.#retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
      registers,
    });
    // client-go creates every series with the queue: they read 0 before the first add.
    this.#depth.set(labels, 0);
    this.#adds.inc(labels, 0);
    this.#retries.inc(labels, 0);
    this.#latency.zero(labels);
    this.#workDuration.zero(labels);
  }

  add(key: string): void {
    this.#adds.inc(this.#labels);
    this.#depth.inc(this.#labels);
    if (!this.#addTimes.has(key)) this.#addTimes.set(key, this.#now());
  }

  get(key: string): void {
    this.#depth.dec(this.#labels);
    const now = this.#now();
    this.#processingStart.set(key, now);
    const added = this.#addTimes.get(key);
    if (added !== undefined) {
      this.#latency.observe(this.#labels, (now - added) / 1000);
      this.#addTimes.delete(key);
    }
  }

  done(key: string): void {
    const started = this.#processingStart.get(key);
    if (started === undefined) return;
    this.#workDuration.observe(this.#labels, (this.#now() - started) / 1000);
    this.#processingStart.delete(key);
  }

  retry(): void {
    this.#retries.inc(this.#labels);
  }

  late(seconds: number): void {
    this.#onLate?.(seconds);
  }

  shutDown(): void {
    this.#depth.set(this.#labels, 0);
    this.#addTimes.clear();
  }
}

/**
 * rest_client_requests_total{code,method,host} on `registry`: what to give the transport as
 * its `onResult` (lib/kube/transport.ts). `code` is the HTTP status or `<error>` when none came
 * back, as client-go reports it.
 */
export function restClientMetrics(registry: Registry): (result: RequestResult) => void {
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers: [registry],
  });
  return (r) => requests.inc({ code: r.code, method: r.method, host: r.host });
}

/** leader_election_master_status of one lease: `on()` while leading, `off()` otherwise. */
export interface LeaderMetric {
  on(): void;
  off(): void;
}

/**
 * leader_election_master_status{name} on `registry`: the function returned gives the metric of
 * the lease `name` (1 while this process leads it, 0 otherwise), reading 0 from then on, as
 * client-go's elector does when it is created. Without a lease the series is absent, as with
 * controller-runtime when leader election is off.
 */
export function leaderElectionMetrics(registry: Registry): (name: string) => LeaderMetric {
  const gauge = new Gauge({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'],
    registers: [registry],
  });
  return (name) => {
    gauge.set({ name }, 0);
    return { on: () => gauge.set({ name }, 1), off: () => gauge.set({ name }, 0) };
  };
}
