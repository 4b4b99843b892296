// Benchmark section `operator` of `npm run bench`, on the environment's cluster with a real
// Prometheus: (1) time for 1,000 AITasks to converge (phase set, observedGeneration
// current) against the floor of 1,000 raw status writes from one client in the same run;
// (2) a restarted operator's no-op reconciles of those converged AITasks write nothing;
// (3) operator RSS with 10,000 AITasks (and their 10,000 Deployments) cached and converged,
// against an idle operator. Each AITask targets a Deployment of its own (paused, no pods),
// so every reconcile takes the full path: finalizer, revision, metric, status, Event.
// Progress goes to stderr, results to stdout. The 10,000-object namespace is not cleaned up:
// the environment is torn down after the run.

import { KubeTransport } from '../../lib/kube/transport.ts';
import { printTable } from './stats.ts';
import type { Environment } from '../support/environment.ts';
import { startOperatorProcess, type OperatorProcess } from '../support/operator.ts';
import { startPrometheus } from '../../scripts/lib/prometheus.ts';
import {
  clients,
  converged,
  mib,
  namespace,
  pool,
  populate,
  release as releaseNs,
  sayer,
  secs,
  sleep,
  type Clients,
} from './fixtures.ts';

/** Reconcile workers of the measured operator, and parallel writers of the floor. */
const WORKERS = 4;
const CONVERGE_N = 1000;
const CACHE_N = 10_000;
/** Wait after convergence before reading RSS, so the process is at rest. */
const SETTLE_MS = 3000;

const say = sayer('operator');

/** Creates namespace `name` with `n` Deployments and `n` AITasks targeting them one to one. */
async function fixture(c: Clients, name: string, n: number): Promise<string> {
  const t0 = performance.now();
  await namespace(c, name);
  await populate(c, name, 0, n);
  say(`${name}: ${n} Deployments and AITasks created in ${secs(performance.now() - t0)}`);
  return name;
}

/** Takes the finalizers off and deletes the namespace. */
async function release(c: Clients, ns: string): Promise<void> {
  const t0 = performance.now();
  await releaseNs(c, ns);
  say(`${ns}: released in ${secs(performance.now() - t0)}`);
}

/** The section; `env` is the shared environment of `npm run bench`. */
export async function bench(env: Environment): Promise<void> {
  const started = performance.now();
  const kubeconfig = env.cluster.kubeconfigPath;
  const transport = await KubeTransport.create({ kubeconfig });
  const c = clients(transport);
  const prometheus = await startPrometheus([]);
  const running = new Set<OperatorProcess>();
  const start = async (ns: string): Promise<OperatorProcess> => {
    const op = await startOperatorProcess(
      [
        `--namespace=${ns}`,
        `--prometheus-url=${prometheus.url}`,
        `--max-concurrent-reconciles=${WORKERS}`,
        '--log-level=warn',
      ],
      {},
      { kubeconfig },
    );
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
    while ((await op.metric('controller_runtime_reconcile_total')) < CONVERGE_N) await sleep(200);
    const noopReconciles = await op.metric('controller_runtime_reconcile_total');
    const noopWrites = await op.metric('aiops_status_writes_total');
    const after = (await c.tasks.listAll(ns)).items;
    const changed = after.filter((o) => before.get(o.metadata.name) !== o.metadata.resourceVersion).length;
    const newEvents = (await c.events.listAll(ns)).items.length - eventsBefore;
    await stop(op);
    await release(c, ns);

    const idleNs = await fixture(c, `bench-idle-${suffix}`, 0);
    op = await start(idleNs);
    await sleep(SETTLE_MS);
    const idleRss = await op.metric('process_resident_memory_bytes');
    await stop(op);
    await release(c, idleNs);

    const bigNs = await fixture(c, `bench-rss-${suffix}`, CACHE_N);
    t0 = performance.now();
    const bigWatch = converged(c.tasks, bigNs, CACHE_N);
    op = await start(bigNs);
    await bigWatch;
    const bigMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    const rss = await op.metric('process_resident_memory_bytes');
    const heap = await op.metric('nodejs_heap_size_used_bytes');
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
