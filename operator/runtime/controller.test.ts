import assert from 'node:assert/strict';
import { ConflictError } from '../../lib/kube/errors.ts';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createLogger } from '../../lib/log.ts';
import { Controller, errorText, type Result } from './controller.ts';
import { controllerMetrics } from './metrics.ts';
import { RateLimiter } from './ratelimit.ts';
import { WorkQueue } from './workqueue.ts';
import { IdleRelease } from './release.ts';

test('errorText: any thrown value, even one whose toString throws', () => {
  const hostile = {
    toString() {
      throw new Error('no');
    },
  };
  const cases: [unknown, string][] = [
    [new Error('boom'), 'boom'],
    ['text', 'text'],
    [null, 'null'],
    [undefined, 'undefined'],
    [42, '42'],
    [hostile, 'unprintable error'],
    [Object.create(null), 'unprintable error'],
  ];
  for (const [err, want] of cases) assert.equal(errorText(err), want);
});

test('Controller: whatever one reconcile throws or returns is that key’s error; the others go on', async () => {
  const registry = new Registry();
  const queue = new WorkQueue({ limiter: new RateLimiter({ qps: 1000, burst: 1000 }) });
  const seen = new Map<string, number>();
  const hostile: Record<string, () => Promise<Result>> = {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a hostile rejection value is the point
    null: () => Promise.reject(null),
    sync: () => {
      throw Object.create(null) as Error;
    },
    undefinedResult: () => Promise.resolve(undefined as unknown as Result),
    nanRequeue: () => Promise.resolve({ requeueAfterMs: NaN }),
    ok: () => Promise.resolve({}),
  };
  const controller = new Controller({
    queue,
    reconcile: (key) => {
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const run = hostile[key];
      if (run === undefined) throw new Error(`unexpected key ${key}`);
      return run();
    },
    metrics: controllerMetrics(registry, 'test'),
    log: createLogger('test', { level: 'error', write: () => undefined }),
    maxConcurrentReconciles: 2,
  });
  for (const key of Object.keys(hostile)) queue.add(key);
  controller.start();
  const deadline = Date.now() + 30_000;
  while (((seen.get('null') ?? 0) < 3 || (seen.get('sync') ?? 0) < 3) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  await controller.stop();
  assert.ok((seen.get('null') ?? 0) >= 3, 'a rejected null is retried with backoff');
  assert.ok((seen.get('sync') ?? 0) >= 3, 'a synchronous throw of an unprintable value is retried');
  assert.equal(seen.get('ok'), 1, 'the healthy key ran once');
  assert.equal(seen.get('undefinedResult'), 1);
  assert.equal(seen.get('nanRequeue'), 1, 'a NaN requeue is not a hot loop');
  const errors = (await registry.getSingleMetric('controller_runtime_reconcile_errors_total')?.get())
    ?.values[0];
  assert.ok((errors?.value ?? 0) >= 6, 'each error is counted');
});

test('Controller: a conflict is retried with backoff and counted as a requeue, not an error', async () => {
  const registry = new Registry();
  const queue = new WorkQueue({ limiter: new RateLimiter({ qps: 1000, burst: 1000 }) });
  let runs = 0;
  const controller = new Controller({
    queue,
    reconcile: () => {
      runs++;
      if (runs <= 3)
        return Promise.reject(
          new ConflictError(409, { reason: 'Conflict', message: 'the object has been modified' }, 'Conflict'),
        );
      return Promise.resolve({});
    },
    metrics: controllerMetrics(registry, 'test'),
    log: createLogger('test', { level: 'error', write: () => undefined }),
    maxConcurrentReconciles: 1,
  });
  queue.add('mallory/t');
  controller.start();
  const deadline = Date.now() + 30_000;
  while (runs < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await controller.stop();
  assert.equal(runs, 4, 'three conflicts, then the retry that succeeds');
  const errors = (await registry.getSingleMetric('controller_runtime_reconcile_errors_total')?.get())
    ?.values[0];
  assert.equal(errors?.value ?? 0, 0, 'no conflict is counted as an error');
  const totals = (await registry.getSingleMetric('controller_runtime_reconcile_total')?.get())?.values ?? [];
  const byResult = new Map(totals.map((v) => [v.labels['result'], v.value]));
  assert.equal(byResult.get('requeue'), 3);
  assert.equal(byResult.get('success'), 1);
});

test('Controller: the idle release hears of every reconcile, and of the queue going idle once drained', async () => {
  const told: boolean[] = [];
  let drained = (): void => undefined;
  const allDone = new Promise<void>((r) => (drained = r));
  class Recording extends IdleRelease {
    override reconciled(idle: boolean): void {
      told.push(idle);
      if (told.length === 3) drained();
    }
  }
  const queue = new WorkQueue();
  const controller = new Controller({
    queue,
    reconcile: () => Promise.resolve({}),
    metrics: controllerMetrics(new Registry(), 'test'),
    log: createLogger('test', { level: 'error', write: () => undefined }),
    release: new Recording({ gc: undefined }),
  });
  for (const key of ['a', 'b', 'c']) queue.add(key);
  controller.start();
  await allDone;
  await controller.stop();
  assert.deepEqual(told, [false, false, true], 'one worker: idle only after the last key');
});

test('Controller: a key that keeps failing the same way is logged once a minute, every failure counted', async () => {
  const registry = new Registry();
  const queue = new WorkQueue({ limiter: new RateLimiter({ qps: 1000, burst: 1000 }) });
  const lines: { level: string; msg: string; key?: string }[] = [];
  let calls = 0;
  const controller = new Controller({
    queue,
    reconcile: (key) => {
      calls++;
      return Promise.reject(new Error(`${key} cannot be read`));
    },
    metrics: controllerMetrics(registry, 'test'),
    log: createLogger('test', {
      level: 'debug',
      write: (l) => void lines.push(JSON.parse(l) as { level: string; msg: string }),
    }),
    maxConcurrentReconciles: 1,
  });
  queue.add('demo/a');
  controller.start();
  const deadline = Date.now() + 30_000;
  while (calls < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await controller.stop();
  assert.ok(calls >= 5, `retried with backoff: ${calls}`);
  const warned = lines.filter((l) => l.level === 'warn');
  assert.deepEqual(
    warned.map((l) => [l.msg, l.key]),
    [['reconcile failed, retrying', 'demo/a']],
    'one warning for the key',
  );
  assert.equal(lines.filter((l) => l.msg === 'reconcile failed again, retrying').length, calls - 1);
});

/** A controller of `workers` whose reconciles each wait until released; records the keys started, in order. */
function blockingController(workers: number): {
  queue: WorkQueue;
  controller: Controller;
  started: string[];
  release: (key: string) => void;
  startsReach: (n: number) => Promise<void>;
  stop: () => Promise<void>;
} {
  const queue = new WorkQueue();
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  let onStart = (): void => undefined;
  const controller = new Controller({
    queue,
    reconcile: (key) => {
      started.push(key);
      onStart();
      return new Promise<Result>((resolve) => releases.set(key, () => resolve({})));
    },
    metrics: controllerMetrics(new Registry(), 'test'),
    log: createLogger('test', { level: 'error', write: () => undefined }),
    maxConcurrentReconciles: workers,
  });
  return {
    queue,
    controller,
    started,
    release: (key) => releases.get(key)?.(),
    startsReach: (n) =>
      new Promise<void>((resolve) => {
        onStart = () => {
          if (started.length >= n) resolve();
        };
        onStart();
      }),
    stop: async () => {
      const stopping = controller.stop();
      for (const r of releases.values()) r();
      await stopping;
    },
  };
}

test("Controller: while one namespace's slow reconciles hold the workers, a worker they free goes to another namespace's waiting key", async () => {
  const { queue, controller, started, release, startsReach, stop } = blockingController(4);
  for (let i = 0; i < 8; i++) queue.add(`mallory/t${i}`);
  controller.start();
  await startsReach(4);
  assert.deepEqual(
    started,
    ['mallory/t0', 'mallory/t1', 'mallory/t2', 'mallory/t3'],
    'alone, mallory uses every worker',
  );
  queue.add('alice/t0');
  release('mallory/t0');
  await startsReach(5);
  assert.equal(started[4], 'alice/t0', "the freed worker takes alice's key, not mallory's fifth");
  release('mallory/t1');
  await startsReach(6);
  assert.equal(started[5], 'mallory/t4', 'alice has nothing waiting: mallory takes the next');
  await stop();
});

test('Controller: the queue reckons each namespace’s fair share from the controller’s workers (4 workers, 3 busy namespaces: 2 each)', async () => {
  const { queue, controller, started, release, startsReach, stop } = blockingController(4);
  queue.add('a/t0');
  for (let i = 0; i < 6; i++) queue.add(`b/t${i}`);
  controller.start();
  await startsReach(4);
  assert.deepEqual(started, ['a/t0', 'b/t0', 'b/t1', 'b/t2'], 'a has nothing more waiting: b takes the rest');
  queue.add('a/t1');
  queue.add('c/t0');
  release('b/t0');
  await startsReach(5);
  assert.equal(started[4], 'a/t1', 'b holds its share of 2; a holds 1 of its 2 and comes first in turn');
  await stop();
});

test('Controller: one namespace’s failing keys do not delay another namespace’s retry', async () => {
  // Namespace a's 200 keys fail at every try, then b's one key fails once. Retries run at 1 a
  // second per namespace past a burst of 1: a's 199 retries in debt are minutes of its own
  // bucket; b's retry is due after its 5 ms backoff. (One bucket for all would put b's retry
  // behind a's 199, over three minutes.)
  const queue = new WorkQueue({
    limiter: new RateLimiter({ qps: 1000, burst: 1000, namespaceQps: 1, namespaceBurst: 1 }),
  });
  const runs = new Map<string, number>();
  const aRuns = (): number =>
    [...runs].filter(([k]) => k.startsWith('a/')).reduce((sum, [, n]) => sum + n, 0);
  let aRunsAtB: number | undefined;
  const controller = new Controller({
    queue,
    reconcile: (key) => {
      const n = (runs.get(key) ?? 0) + 1;
      runs.set(key, n);
      if (key === 'b/only' && n === 2) {
        aRunsAtB = aRuns();
        return Promise.resolve({});
      }
      return Promise.reject(new Error(`${key} fails`));
    },
    metrics: controllerMetrics(new Registry(), 'test'),
    log: createLogger('test', { level: 'error', write: () => undefined }),
    maxConcurrentReconciles: 2,
  });
  for (let i = 0; i < 200; i++) queue.add(`a/t${i}`);
  controller.start();
  const deadline = Date.now() + 30_000;
  while (aRuns() < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.ok(aRuns() >= 200, 'each of a’s keys failed once');
  queue.add('b/only');
  while (aRunsAtB === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await controller.stop();
  assert.equal(runs.get('b/only'), 2, 'b was retried within 30 s, and succeeded');
  assert.ok(
    (aRunsAtB ?? Infinity) <= 205,
    `${aRunsAtB} runs of a’s keys before b’s retry: a few retries of a’s at most`,
  );
});
