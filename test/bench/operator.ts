// Benchmark section `operator` of `npm run bench`, on the environment's cluster with a real
// Prometheus: (1) time for 1,000 AITasks to converge (phase set, observedGeneration
// current) against the floor of 1,000 raw status writes from one client in the same run;
// (2) a restarted operator's no-op reconciles of those converged AITasks write nothing;
// (3) operator RSS with 10,000 AITasks (and their 10,000 Deployments) cached and converged,
// against an idle operator. Each AITask targets a Deployment of its own (paused, no pods),
// so every reconcile takes the full path: finalizer, revision, metric, status, Event.
// Progress goes to stderr, results to stdout. The 10,000-object namespace is not cleaned up:
// the environment is torn down after the run.

import { AITaskClient } from '../../api/aitask-client.ts';
import { ResourceClient } from '../../api/kube/resources.ts';
import { KubeTransport } from '../../api/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { printTable } from './stats.ts';
import type { Environment } from '../support/environment.ts';
import { startOperatorProcess, type OperatorProcess } from '../support/operator.ts';
import { startPrometheus } from '../../scripts/lib/prometheus.ts';
import { Informer, objectKey } from '../../operator/runtime/informer.ts';
import { Resources, type Deployment, type KubeEvent } from '../../operator/runtime/kinds.ts';

/** Reconcile workers of the measured operator, and parallel writers of the floor. */
const WORKERS = 4;
/** Parallel requests that create and clean up fixtures (not measured). */
const SETUP_WIDTH = 32;
const CONVERGE_N = 1000;
const CACHE_N = 10_000;
/** Wait after convergence before reading RSS, so the process is at rest. */
const SETTLE_MS = 3000;

const say = (msg: string): void => void process.stderr.write(`[bench operator] ${msg}\n`);
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** A Deployment as the bench writes it (`paused` is not among the operator's fields). */
interface BenchDeployment extends Deployment {
  spec: NonNullable<Deployment['spec']> & { paused: boolean };
}

interface Clients {
  readonly tasks: AITaskClient;
  readonly deployments: ResourceClient<BenchDeployment>;
  readonly namespaces: ResourceClient<{ metadata: { name: string } }>;
  readonly events: ResourceClient<KubeEvent>;
}

function task(i: number): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: `t-${i}` },
    spec: {
      target: { kind: 'Deployment', name: `web-${i}` },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

/** A paused Deployment: the controller-manager makes no ReplicaSet for it, so it costs one object. */
function deployment(i: number): BenchDeployment {
  const labels = { app: `web-${i}` };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `web-${i}` },
    spec: {
      replicas: 1,
      paused: true,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'a', image: 'nginx' }] } },
    },
  };
}

/** Creates namespace `name` with `n` Deployments and `n` AITasks targeting them one to one. */
async function fixture(c: Clients, name: string, n: number): Promise<string> {
  const t0 = performance.now();
  await c.namespaces.create(undefined, { metadata: { name } });
  const ids = Array.from({ length: n }, (_, i) => i);
  await pool(ids, SETUP_WIDTH, (i) => c.deployments.create(name, deployment(i)));
  await pool(ids, SETUP_WIDTH, (i) => c.tasks.create(name, task(i)));
  say(`${name}: ${n} Deployments and AITasks created in ${secs(performance.now() - t0)}`);
  return name;
}

/** Takes the finalizers off (no operator runs there any more) and deletes the namespace. */
async function release(c: Clients, ns: string): Promise<void> {
  const t0 = performance.now();
  const list = await c.tasks.listAll(ns);
  await pool(list.items, SETUP_WIDTH, (o) =>
    c.tasks.patch(ns, o.metadata.name ?? '', { metadata: { finalizers: null } }),
  );
  await c.namespaces.delete(undefined, ns);
  say(`${ns}: released in ${secs(performance.now() - t0)}`);
}

/** Resolves once `n` AITasks of `ns` are converged, seen through a watch (no polling LISTs). */
async function converged(tasks: AITaskClient, ns: string, n: number): Promise<void> {
  const cache = new Informer<v2.AITask>(tasks, { namespace: ns });
  const done = new Set<string>();
  let resolve = (): void => undefined;
  const all = new Promise<void>((r) => (resolve = r));
  const see = (o: v2.AITask): void => {
    if (o.status?.phase !== undefined && o.status.observedGeneration === o.metadata.generation)
      done.add(objectKey(o));
    else done.delete(objectKey(o));
    if (done.size >= n) resolve();
  };
  cache.on({ add: see, update: (_old, o) => see(o) });
  await cache.start();
  await all;
  await cache.stop();
}

/** The section; `env` is the shared environment of `npm run bench`. */
export async function bench(env: Environment): Promise<void> {
  const started = performance.now();
  const kubeconfig = env.cluster.kubeconfigPath;
  const transport = await KubeTransport.create({ kubeconfig });
  const c: Clients = {
    tasks: new AITaskClient(transport, 'v2'),
    deployments: new ResourceClient(transport, Resources.deployments),
    events: new ResourceClient(transport, Resources.events),
    namespaces: new ResourceClient(transport, {
      group: '',
      version: 'v1',
      plural: 'namespaces',
      namespaced: false,
    }),
  };
  const prometheus = await startPrometheus([]);
  const running = new Set<OperatorProcess>();
  const start = async (ns: string): Promise<OperatorProcess> => {
    const op = await startOperatorProcess(kubeconfig, [
      `--namespace=${ns}`,
      `--prometheus-url=${prometheus.url}`,
      `--max-concurrent-reconciles=${WORKERS}`,
      '--log-level=warn',
    ]);
    running.add(op);
    return op;
  };
  const stop = async (op: OperatorProcess): Promise<void> => {
    await op.stop();
    running.delete(op);
  };
  const suffix = Date.now().toString(36);
  try {
    const ns = await fixture(c, `bench-converge-${suffix}`, CONVERGE_N);
    const names = Array.from({ length: CONVERGE_N }, (_, i) => `t-${i}`);
    let t0 = performance.now();
    await pool(names, WORKERS, (name) => c.tasks.patchStatus(ns, name, { message: 'floor' }));
    const floorMs = performance.now() - t0;
    t0 = performance.now();
    const watching = converged(c.tasks, ns, CONVERGE_N);
    let op = await start(ns);
    const readyMs = performance.now() - t0;
    await watching;
    const convergeMs = performance.now() - t0;
    const firstWrites = await op.metric('aiops_status_writes_total');
    await stop(op);
    say(`converged ${CONVERGE_N} in ${secs(convergeMs)}; restarting for the no-op pass`);

    const before = new Map(
      (await c.tasks.listAll(ns)).items.map((o) => [o.metadata.name, o.metadata.resourceVersion]),
    );
    const eventsBefore = (await c.events.listAll(ns)).items.length;
    op = await start(ns);
    while ((await op.metric('aiops_reconcile_total')) < CONVERGE_N) await sleep(200);
    const noopReconciles = await op.metric('aiops_reconcile_total');
    const noopWrites = await op.metric('aiops_status_writes_total');
    const after = (await c.tasks.listAll(ns)).items;
    const changed = after.filter((o) => before.get(o.metadata.name) !== o.metadata.resourceVersion).length;
    const newEvents = (await c.events.listAll(ns)).items.length - eventsBefore;
    await stop(op);
    await release(c, ns);

    const idleNs = await fixture(c, `bench-idle-${suffix}`, 0);
    op = await start(idleNs);
    await sleep(SETTLE_MS);
    const idleRss = await op.metric('aiops_process_resident_memory_bytes');
    await stop(op);
    await release(c, idleNs);

    const bigNs = await fixture(c, `bench-rss-${suffix}`, CACHE_N);
    t0 = performance.now();
    const bigWatch = converged(c.tasks, bigNs, CACHE_N);
    op = await start(bigNs);
    await bigWatch;
    const bigMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    const rss = await op.metric('aiops_process_resident_memory_bytes');
    const heap = await op.metric('aiops_nodejs_heap_size_used_bytes');
    await stop(op);
    say(`${bigNs} is left to the environment's teardown (releasing 10,000 finalizers takes a minute)`);

    printTable(
      `operator (${WORKERS} workers; section took ${secs(performance.now() - started)})`,
      ['measure', 'value', 'baseline', 'ratio'],
      [
        [
          `${CONVERGE_N} AITasks converge (start to all converged)`,
          secs(convergeMs),
          `${CONVERGE_N} raw status writes: ${secs(floorMs)}`,
          `${(convergeMs / floorMs).toFixed(1)}x`,
        ],
        ['  of which process start and cache sync', secs(readyMs), '', ''],
        ['  status writes during convergence', String(firstWrites), `${CONVERGE_N} AITasks`, ''],
        [
          `no-op reconciles after a restart`,
          `${noopReconciles} reconciles`,
          `${noopWrites} status writes, ${changed} AITasks changed, ${newEvents} Events`,
          '',
        ],
        [
          `RSS, ${CACHE_N} AITasks + Deployments cached`,
          `${mib(rss)} (heap ${mib(heap)})`,
          `idle: ${mib(idleRss)}`,
          `${(rss / idleRss).toFixed(2)}x`,
        ],
        [`  ${CACHE_N} AITasks converge`, secs(bigMs), `${((CACHE_N / bigMs) * 1000).toFixed(0)}/s`, ''],
      ],
    );
  } finally {
    await Promise.all([...running].map((o) => o.stop()));
    await prometheus.stop();
  }
}
