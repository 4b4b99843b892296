// Benchmark section of `npm run bench` for the operator, on the harness cluster
// (AIOPS_TEST_KUBECONFIG): (1) time for 1,000 AITasks to converge (phase set,
// observedGeneration current) against the floor of 1,000 raw status writes from one client
// in the same run; (2) operator RSS with 10,000 AITasks cached against an idle operator.

import { AITaskClient } from '../api/aitask-client.ts';
import { ResourceClient } from '../api/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import { freshNamespace, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import { startExporter, startPrometheus } from '../test/support/prometheus.ts';
import { Resources, type Deployment } from './kinds.ts';

const CONCURRENCY = 4;

async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

function task(name: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

async function setup(tasks: AITaskClient, ns: string, n: number): Promise<string[]> {
  const t = await testTransport();
  await new ResourceClient<Deployment>(t, Resources.deployments).create(ns, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'a', image: 'nginx' }] },
      },
    },
  });
  const names = Array.from({ length: n }, (_, i) => `t-${i}`);
  await pool(names, 16, (name) => tasks.create(ns, task(name)));
  return names;
}

async function converged(tasks: AITaskClient, ns: string, n: number): Promise<number> {
  const list = await tasks.listAll(ns);
  return list.items.filter(
    (o) => o.status?.phase !== undefined && o.status.observedGeneration === o.metadata.generation,
  ).length === n
    ? n
    : 0;
}

async function untilConverged(tasks: AITaskClient, ns: string, n: number): Promise<void> {
  while ((await converged(tasks, ns, n)) !== n) await new Promise((r) => setTimeout(r, 250));
}

/** Takes our finalizer off every AITask of `ns` (no operator runs there any more), so the namespace can go. */
async function release(tasks: AITaskClient, ns: string): Promise<void> {
  const list = await tasks.listAll(ns);
  await pool(list.items, 16, (o) => tasks.removeFinalizer(ns, o.metadata.name ?? ''));
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Prints the operator's benchmark figures. */
export async function bench(): Promise<void> {
  const kubeconfig = testKubeconfig();
  const tasks = new AITaskClient(await testTransport(), 'v2');
  const exporter = await startExporter();
  const prometheus = await startPrometheus([exporter.address]);
  const cleanups: (() => Promise<void>)[] = [];
  const ops: OperatorProcess[] = [];
  const start = async (ns: string): Promise<OperatorProcess> => {
    const op = await startOperatorProcess(kubeconfig, [
      `--namespace=${ns}`,
      `--prometheus-url=${prometheus.url}`,
      `--max-concurrent-reconciles=${CONCURRENCY}`,
      '--log-level=warn',
    ]);
    ops.push(op);
    return op;
  };
  try {
    const n = 1000;
    const ns = await freshNamespace('bench-converge', (fn) => cleanups.push(fn));
    const names = await setup(tasks, ns, n);
    let t0 = performance.now();
    await pool(names, CONCURRENCY, (name) => tasks.patchStatus(ns, name, { message: 'floor' }));
    const floorMs = performance.now() - t0;
    t0 = performance.now();
    const op = await start(ns);
    await untilConverged(tasks, ns, n);
    const convergeMs = performance.now() - t0;
    const writes = await op.metric('aiops_status_writes_total');
    console.log(
      `operator: ${n} AITasks converged in ${convergeMs.toFixed(0)} ms (${((n / convergeMs) * 1000).toFixed(0)}/s, ${CONCURRENCY} workers, ${writes} status writes)`,
    );
    console.log(
      `operator: floor, ${n} raw status writes (${CONCURRENCY} in parallel, one client): ${floorMs.toFixed(0)} ms`,
    );
    console.log(
      `operator: convergence / floor = ${(convergeMs / floorMs).toFixed(2)}x (includes process start, cache sync and the metric query per task)`,
    );
    await op.stop();
    await release(tasks, ns);

    const idleNs = await freshNamespace('bench-idle', (fn) => cleanups.push(fn));
    const idle = await start(idleNs);
    await new Promise((r) => setTimeout(r, 2000));
    const idleRss = await idle.metric('aiops_process_resident_memory_bytes');
    await idle.stop();
    const big = 10_000;
    const bigNs = await freshNamespace('bench-rss', (fn) => cleanups.push(fn));
    await setup(tasks, bigNs, big);
    const loaded = await start(bigNs);
    await untilConverged(tasks, bigNs, big);
    const rss = await loaded.metric('aiops_process_resident_memory_bytes');
    const heap = await loaded.metric('aiops_nodejs_heap_size_used_bytes');
    console.log(
      `operator: RSS with ${big} AITasks cached and converged: ${mib(rss)} (heap used ${mib(heap)}); idle operator ${mib(idleRss)}; ratio ${(rss / idleRss).toFixed(2)}x`,
    );
    await loaded.stop();
    await release(tasks, bigNs);
  } finally {
    await Promise.all(ops.map((o) => o.stop()));
    for (const c of cleanups) await c();
    await prometheus.stop();
    await exporter.close();
  }
}

if (import.meta.main) await bench();
