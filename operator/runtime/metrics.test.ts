// The controller-runtime series, pure: the work queue's on a fake clock (depth, adds, queue
// and work durations, unfinished work and the longest processor at scrape, retries), the
// controller's results, errors, panics and workers, the rest client counter and the leader
// gauge, with controller-runtime's names, labels and buckets.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { ForbiddenError } from '../../lib/kube/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { Controller, type Result } from './controller.ts';
import {
  controllerMetrics,
  leaderElectionMetrics,
  RECONCILE_TIME_BUCKETS,
  restClientMetrics,
  WORKQUEUE_DURATION_BUCKETS,
  WorkQueueMetrics,
} from './metrics.ts';
import { RateLimiter } from './ratelimit.ts';
import { WorkQueue } from './workqueue.ts';

/** The samples of `name` on `registry`, as `labels → value` with labels rendered k=v,… in order. */
async function samples(registry: Registry, name: string): Promise<Map<string, number>> {
  const metric = registry.getSingleMetric(name);
  assert.ok(metric, `${name} is registered`);
  const out = new Map<string, number>();
  for (const v of (await metric.get()).values) {
    const labels = Object.entries(v.labels)
      .map(([k, l]) => `${k}=${String(l)}`)
      .join(',');
    out.set(
      `${'metricName' in v && typeof v.metricName === 'string' ? v.metricName : name}{${labels}}`,
      v.value,
    );
  }
  return out;
}

const Q = 'name=aitask,controller=aitask';

test('work queue metrics follow client-go on a fake clock, labelled name and controller', async () => {
  const registry = new Registry();
  let now = 1_000;
  const metrics = new WorkQueueMetrics(registry, 'aitask', () => now);
  const q = new WorkQueue({ observer: metrics, limiter: new RateLimiter({ qps: 1000, burst: 1000 }) });
  const depth = async (): Promise<number | undefined> =>
    (await samples(registry, 'workqueue_depth')).get(`workqueue_depth{${Q}}`);
  assert.equal(await depth(), 0, 'every series exists from the start');
  assert.equal((await samples(registry, 'workqueue_adds_total')).get(`workqueue_adds_total{${Q}}`), 0);

  q.add('ns/a');
  q.add('ns/a'); // a duplicate is no add
  q.add('ns/b');
  assert.equal(await depth(), 2);
  now += 250;
  assert.equal(await q.get(), 'ns/a');
  assert.equal(await depth(), 1);
  q.add('ns/a'); // dirty while in flight: an add, counted in depth until handed out again
  assert.equal(await depth(), 2);
  now += 2_000;
  const running = await samples(registry, 'workqueue_unfinished_work_seconds');
  assert.equal(running.get(`workqueue_unfinished_work_seconds{${Q}}`), 2);
  assert.equal(
    (await samples(registry, 'workqueue_longest_running_processor_seconds')).get(
      `workqueue_longest_running_processor_seconds{${Q}}`,
    ),
    2,
  );
  q.done('ns/a');
  assert.equal((await samples(registry, 'workqueue_adds_total')).get(`workqueue_adds_total{${Q}}`), 3);

  const latency = await samples(registry, 'workqueue_queue_duration_seconds');
  assert.equal(latency.get(`workqueue_queue_duration_seconds_count{${Q}}`), 1, 'one key handed out');
  assert.equal(latency.get(`workqueue_queue_duration_seconds_sum{${Q}}`), 0.25);
  const work = await samples(registry, 'workqueue_work_duration_seconds');
  assert.equal(work.get(`workqueue_work_duration_seconds_count{${Q}}`), 1);
  assert.equal(work.get(`workqueue_work_duration_seconds_sum{${Q}}`), 2);
  assert.equal(work.get(`workqueue_work_duration_seconds_bucket{le=1,${Q}}`), 0);
  assert.equal(work.get(`workqueue_work_duration_seconds_bucket{le=10,${Q}}`), 1);
  assert.equal(
    (await samples(registry, 'workqueue_unfinished_work_seconds')).get(
      `workqueue_unfinished_work_seconds{${Q}}`,
    ),
    0,
    'nothing in flight',
  );

  q.addAfter('ns/c', 60_000);
  q.addRateLimited('ns/d');
  assert.equal((await samples(registry, 'workqueue_retries_total')).get(`workqueue_retries_total{${Q}}`), 2);
  q.addEvent('ns/e'); // a watch event paced by its namespace's bucket is no retry
  assert.equal((await samples(registry, 'workqueue_retries_total')).get(`workqueue_retries_total{${Q}}`), 2);
  q.shutDown();
  assert.equal(await depth(), 0);
});

test('workqueue buckets are Go’s ExponentialBuckets(10e-9, 10, 12); reconcile time has controller-runtime’s 40', () => {
  assert.equal(WORKQUEUE_DURATION_BUCKETS.length, 12);
  assert.equal(WORKQUEUE_DURATION_BUCKETS[0], 1e-8);
  assert.equal(WORKQUEUE_DURATION_BUCKETS[3], 9.999999999999999e-6, 'the same doubles Go computes');
  assert.equal(WORKQUEUE_DURATION_BUCKETS[11], 1000);
  assert.equal(RECONCILE_TIME_BUCKETS.length, 40);
  assert.deepEqual([RECONCILE_TIME_BUCKETS[0], RECONCILE_TIME_BUCKETS.at(-1)], [0.005, 60]);
});

test('controller metrics: results as controller-runtime labels them, errors, terminal errors, panics and workers', async () => {
  const registry = new Registry();
  const queue = new WorkQueue({ limiter: new RateLimiter({ qps: 1000, burst: 1000 }) });
  const outcomes: Record<string, () => Promise<Result>> = {
    'ns/ok': () => Promise.resolve({}),
    'ns/later': () => Promise.resolve({ requeueAfterMs: 60_000 }),
    'ns/terminal': () => Promise.reject(new ForbiddenError(403, { message: 'forbidden' }, 'forbidden')),
    'ns/panic': () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'spec')")),
  };
  let busyPeak = 0;
  const metrics = controllerMetrics(registry, 'aitask');
  const controller = new Controller({
    queue,
    reconcile: async (key) => {
      const active = (await samples(registry, 'controller_runtime_active_workers')).get(
        'controller_runtime_active_workers{controller=aitask}',
      );
      busyPeak = Math.max(busyPeak, active ?? 0);
      const run = outcomes[key];
      if (run === undefined) throw new Error(`unexpected ${key}`);
      return run();
    },
    metrics,
    log: createLogger('test', { level: 'error', write: () => undefined }),
    maxConcurrentReconciles: 3,
    terminalRetryMs: 60_000,
  });
  controller.start();
  const total = async (): Promise<Map<string, number>> =>
    samples(registry, 'controller_runtime_reconcile_total');
  assert.deepEqual(
    [...(await total()).entries()].sort(),
    ['error', 'requeue', 'requeue_after', 'success']
      .map((r): [string, number] => [`controller_runtime_reconcile_total{controller=aitask,result=${r}}`, 0])
      .sort(),
    'every result reads 0 once the controller starts',
  );
  assert.equal(
    (await samples(registry, 'controller_runtime_max_concurrent_reconciles')).get(
      'controller_runtime_max_concurrent_reconciles{controller=aitask}',
    ),
    3,
  );
  for (const key of Object.keys(outcomes)) queue.add(key);
  const deadline = Date.now() + 30_000;
  const count = async (): Promise<number> =>
    (await samples(registry, 'controller_runtime_reconcile_time_seconds')).get(
      'controller_runtime_reconcile_time_seconds_count{controller=aitask}',
    ) ?? 0;
  // The panicking key is retried with backoff: wait for at least one of each.
  while ((await count()) < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await controller.stop();
  const t = await total();
  const get = (result: string): number =>
    t.get(`controller_runtime_reconcile_total{controller=aitask,result=${result}}`) ?? -1;
  assert.equal(get('success'), 1);
  assert.equal(get('requeue_after'), 1);
  assert.equal(get('requeue'), 0);
  const errors = get('error');
  assert.ok(errors >= 2, String(errors));
  const one = async (name: string): Promise<number | undefined> =>
    (await samples(registry, name)).get(`${name}{controller=aitask}`);
  assert.equal(await one('controller_runtime_reconcile_errors_total'), errors);
  assert.equal(await one('controller_runtime_terminal_reconcile_errors_total'), 1);
  assert.equal(await one('controller_runtime_reconcile_panics_total'), errors - 1, 'a TypeError is a panic');
  assert.equal(await one('controller_runtime_active_workers'), 0, 'idle once stopped');
  assert.ok(busyPeak >= 1, 'a reconcile runs on an active worker');
  const time = await samples(registry, 'controller_runtime_reconcile_time_seconds');
  assert.ok(time.has('controller_runtime_reconcile_time_seconds_bucket{le=0.005,controller=aitask}'));
  assert.ok(time.has('controller_runtime_reconcile_time_seconds_bucket{le=60,controller=aitask}'));
});

test('rest_client_requests_total counts by code, method and host; the leader gauge reads 0 until leading', async () => {
  const registry = new Registry();
  const observe = restClientMetrics(registry);
  observe({ code: '200', method: 'GET', host: '10.0.0.1:6443' });
  observe({ code: '200', method: 'GET', host: '10.0.0.1:6443' });
  observe({ code: '<error>', method: 'PATCH', host: '10.0.0.1:6443' });
  const rest = await samples(registry, 'rest_client_requests_total');
  assert.equal(rest.get('rest_client_requests_total{code=200,method=GET,host=10.0.0.1:6443}'), 2);
  assert.equal(rest.get('rest_client_requests_total{code=<error>,method=PATCH,host=10.0.0.1:6443}'), 1);

  const lease = leaderElectionMetrics(registry);
  assert.equal((await samples(registry, 'leader_election_master_status')).size, 0, 'no lease, no series');
  const leader = lease('aiops-operator-leader');
  const status = async (): Promise<number | undefined> =>
    (await samples(registry, 'leader_election_master_status')).get(
      'leader_election_master_status{name=aiops-operator-leader}',
    );
  assert.equal(await status(), 0);
  leader.on();
  assert.equal(await status(), 1);
  leader.off();
  assert.equal(await status(), 0);
});
