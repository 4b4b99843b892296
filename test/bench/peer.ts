// Bench section `peer`: the operator as deployed against a Go controller-runtime
// operator doing the same first-reconcile requests (test/bench/go-peer), on one cluster in
// one run. For the bundle with the image's Node flags and environment (Dockerfile), the
// bundle without each of them, and the Go peer: start → /readyz 200 and RSS idle (median of
// 3, interleaved, with the start floor's: floors.ts), 1,000 AITasks converging (spawn →
// all converged) at 1 worker (deployed and Go only) and at 4, RSS 3 s after the 1,000 converged, the apiserver's requests per AITask,
// and with AIOPS_BENCH_PEER_MANY=1 RSS after converging 10,000 (deployed and Go, after every
// other run; slow on 2 cores).
// Every figure is printed as a ratio to the Go figure of the same run, next to its
// target. AIOPS_BENCH_PEER_VARIANTS=0 leaves out the without-a-flag runs;
// AIOPS_BENCH_PEER_BASELINE=<bundle>[,<bundle>…] adds other operator bundles run as deployed
// (an A/B of a change in the same run: bundle the commit before it with scripts/lib/esbuild.ts);
// AIOPS_BENCH_PEER_NODE_FLAGS adds Node flags to every bundle run (e.g. `--cpu-prof
// --cpu-prof-dir=/tmp/prof` for a profile). Namespaces are left to the environment's teardown.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { bundleOperator, OPERATOR_MAIN } from '../../scripts/lib/esbuild.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { startPrometheus } from '../../scripts/lib/prometheus.ts';
import type { Environment } from '../support/environment.ts';
import {
  clients,
  converged,
  mib,
  namespace,
  populate,
  sayer,
  secs,
  sleep,
  type Clients,
} from './fixtures.ts';
import { imageRuntime } from '../support/image-runtime.ts';
import {
  apiserverRequests,
  buildGoPeer,
  bundleRunner,
  cpuMsOf,
  reconcilesOf,
  goRunner,
  requestsPerTask,
  rssOf,
  type PeerProc,
  type Runner,
  type RunnerContext,
} from './peer-procs.ts';
import { adminCredentials, floor, startFloorRunner } from './floors.ts';
import { median, ms, printTable } from './stats.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const say = sayer('peer');
/** Wait after ready or convergence before reading RSS, so the process is at rest. */
const SETTLE_MS = 3000;
/** Idle starts per runner (interleaved across runners; the median is reported). */
const STARTS = 3;
const FEW = 1000;
const MANY = 10_000;

/** What one runner measured. */
interface Figures {
  readonly ready: number[];
  readonly idle: number[];
  converge: Partial<Record<1 | 4, number>>;
  /** Reconciles from spawn to all converged, per AITask. */
  reconciles: Partial<Record<1 | 4, number>>;
  /** CPU time the process used from spawn to all converged, in ms. */
  cpu: Partial<Record<1 | 4, number>>;
  requests: Partial<Record<1 | 4, { perTask: number; detail: string }>>;
  rssFew?: number;
  rssMany?: number;
  manyMs?: number;
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** Figures measured so far for each runner, in the runners' order. */
class Results {
  readonly #by = new Map<string, Figures>();
  get(r: Runner): Figures {
    let f = this.#by.get(r.label);
    if (f === undefined) {
      f = { ready: [], idle: [], converge: {}, cpu: {}, reconciles: {}, requests: {} };
      this.#by.set(r.label, f);
    }
    return f;
  }
}

/** The runners: Go first, the bundle as deployed, then the bundle without each flag or variable. */
function runners(ctx: RunnerContext, goBinary: string, variants: boolean): Runner[] {
  const image = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const keys = Object.keys(image.env);
  const out: Runner[] = [
    goRunner(ctx, goBinary),
    bundleRunner(ctx, 'TS as deployed', image.nodeFlags, image.env),
  ];
  for (const bundle of (process.env['AIOPS_BENCH_PEER_BASELINE'] ?? '').split(',').filter((b) => b !== ''))
    out.push(
      bundleRunner({ ...ctx, bundle }, `  ${basename(bundle)}, as deployed`, image.nodeFlags, image.env),
    );
  if (!variants) return out;
  // The flag the image's entrypoint dropped (lib/full-gc.ts says why), so its cost stays measured.
  out.push(bundleRunner(ctx, '  with --expose-gc', [...image.nodeFlags, '--expose-gc'], image.env));
  for (const flag of image.nodeFlags)
    out.push(
      bundleRunner(
        ctx,
        `  without ${flag}`,
        image.nodeFlags.filter((f) => f !== flag),
        image.env,
      ),
    );
  for (const key of keys) {
    const env = Object.fromEntries(Object.entries(image.env).filter(([k]) => k !== key));
    out.push(bundleRunner(ctx, `  without ${key}`, image.nodeFlags, env));
  }
  return out;
}

/** One convergence of FEW fresh AITasks by `r` with `workers`; with 4, RSS after it. */
async function converge(
  c: Clients,
  transport: KubeTransport,
  r: Runner,
  workers: 1 | 4,
  f: Figures,
): Promise<void> {
  const ns = await namespace(c, `bench-peer-${workers}w-${Date.now().toString(36)}`);
  await populate(c, ns, 0, FEW);
  await sleep(1000);
  const before = await apiserverRequests(transport);
  const watching = converged(c.tasks, ns, FEW);
  const t0 = performance.now();
  let p: PeerProc | undefined;
  try {
    p = await r.start(ns, workers);
    await watching;
    f.converge[workers] = performance.now() - t0;
    f.cpu[workers] = cpuMsOf(p.pid);
    f.reconciles[workers] = (await reconcilesOf(p.metricsUrl)) / FEW;
    const requests = requestsPerTask(before, await apiserverRequests(transport), FEW);
    f.requests[workers] = requests;
    say(
      `${r.label.trim()}, ${workers} worker(s): ${FEW} converged in ${secs(f.converge[workers])} ` +
        `(CPU ${secs(f.cpu[workers] ?? 0)}, ${(f.reconciles[workers] ?? 0).toFixed(2)} reconciles/task); ` +
        `${requests.perTask.toFixed(2)} requests/task (${requests.detail}); load ${load()}`,
    );
    if (workers !== 4) return;
    await sleep(SETTLE_MS);
    f.rssFew = rssOf(p.pid);
  } finally {
    await p?.stop();
  }
}

/**
 * RSS of `r` (4 workers) 3 s after converging MANY fresh AITasks. Run after every other
 * convergence: the MANY objects stay in the cluster and would slow the apiserver for the runs
 * after them (each runner caches only its own namespace, so RSS does not depend on the order).
 */
async function convergeMany(c: Clients, r: Runner, f: Figures): Promise<void> {
  const ns = await namespace(c, `bench-peer-many-${Date.now().toString(36)}`);
  await populate(c, ns, 0, MANY);
  await sleep(1000);
  const watching = converged(c.tasks, ns, MANY);
  const t0 = performance.now();
  let p: PeerProc | undefined;
  try {
    p = await r.start(ns, 4);
    await watching;
    f.manyMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    f.rssMany = rssOf(p.pid);
    say(`${r.label.trim()}: ${MANY} converged in ${secs(f.manyMs)}, RSS ${mib(f.rssMany)}; load ${load()}`);
  } finally {
    await p?.stop();
  }
}

const x = (v: number | undefined, go: number | undefined): string =>
  v === undefined || go === undefined ? '—' : `${(v / go).toFixed(2)}×`;
const opt = (v: number | undefined, f: (v: number) => string): string => (v === undefined ? '—' : f(v));

/** The section; `env` is the shared environment of `npm run bench`. */
export async function bench(env: Environment): Promise<void> {
  const started = performance.now();
  const many = process.env['AIOPS_BENCH_PEER_MANY'] === '1';
  const variants = process.env['AIOPS_BENCH_PEER_VARIANTS'] !== '0';
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-peer-'));
  await bundleOperator(join(dir, 'operator'));
  const bundle = join(dir, 'operator', OPERATOR_MAIN);
  const goBinary = buildGoPeer();
  const kubeconfig = env.cluster.kubeconfigPath;
  const transport = await KubeTransport.create({ kubeconfig });
  const c = clients(transport);
  const prometheus = await startPrometheus([]);
  try {
    const ctx: RunnerContext = {
      kubeconfig,
      prometheusUrl: prometheus.url,
      bundle,
      certDir: createServingCert(join(dir, 'certs')).dir,
      extraNodeFlags: (process.env['AIOPS_BENCH_PEER_NODE_FLAGS'] ?? '').split(' ').filter((s) => s !== ''),
    };
    const all = runners(ctx, goBinary, variants);
    const [go, deployed] = all as [Runner, Runner];
    const image = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
    const credentials = adminCredentials(env.cluster.dir, env.cluster.server);
    const startFloor = startFloorRunner(ctx, credentials, image.nodeFlags, image.env);
    const starters = [...all, startFloor];
    const results = new Results();
    const loads = [load()];
    say(`load average at start: ${loads[0] ?? ''}`);
    const fl = await floor(STARTS, SETTLE_MS);
    const tlsFloor = await floor(STARTS, SETTLE_MS, ctx.certDir);
    say(`Node floor: idle ${mib(fl.rss)}, ready ${ms(fl.readyMs)}; TLS floor: idle ${mib(tlsFloor.rss)}`);
    const idleNs = await namespace(c, `bench-peer-idle-${Date.now().toString(36)}`);
    // Each round starts at another runner, so no runner always follows the same one.
    for (let i = 0; i < STARTS; i++)
      for (const r of [...starters.slice(i % starters.length), ...starters.slice(0, i % starters.length)]) {
        const p = await r.start(idleNs, 1);
        await sleep(SETTLE_MS);
        results.get(r).ready.push(p.readyMs);
        results.get(r).idle.push(rssOf(p.pid));
        await p.stop();
        say(`${r.label.trim()}: ready in ${ms(p.readyMs)}, idle ${mib(results.get(r).idle.at(-1) ?? 0)}`);
      }
    say(`idle measured; load ${load()}`);
    for (const r of [go, deployed]) await converge(c, transport, r, 1, results.get(r));
    loads.push(load());
    for (const r of all) await converge(c, transport, r, 4, results.get(r));
    loads.push(load());
    if (many) for (const r of [go, deployed]) await convergeMany(c, r, results.get(r));

    const g = results.get(go);
    const d = results.get(deployed);
    const goReady = median(g.ready);
    const goIdle = median(g.idle);
    const row = (label: string, v: string, gv: string, ratio: string, target: string): string[] => [
      label,
      v,
      gv,
      ratio,
      target,
    ];
    printTable(
      `TS operator as deployed vs a Go controller-runtime v0.25 peer (same requests; load average ${loads.join(' → ')}; section took ${secs(performance.now() - started)})`,
      ['figure', 'TS as deployed', 'Go', 'ratio', 'target'],
      [
        row(
          `${FEW} AITasks converge, 4 workers`,
          opt(d.converge[4], secs),
          opt(g.converge[4], secs),
          x(d.converge[4], g.converge[4]),
          '≤ 1.0×',
        ),
        row(
          `${FEW} AITasks converge, 1 worker`,
          opt(d.converge[1], secs),
          opt(g.converge[1], secs),
          x(d.converge[1], g.converge[1]),
          '≤ 1.0×',
        ),
        row(
          '  CPU time of the process, spawn → converged, 4 workers',
          opt(d.cpu[4], secs),
          opt(g.cpu[4], secs),
          x(d.cpu[4], g.cpu[4]),
          '',
        ),
        row(
          '  CPU time of the process, spawn → converged, 1 worker',
          opt(d.cpu[1], secs),
          opt(g.cpu[1], secs),
          x(d.cpu[1], g.cpu[1]),
          '',
        ),
        row(
          '  reconciles per AITask, spawn → converged, 1 worker',
          opt(d.reconciles[1], (v) => v.toFixed(2)),
          opt(g.reconciles[1], (v) => v.toFixed(2)),
          '',
          '',
        ),
        row(
          `RSS idle (median of ${STARTS})`,
          mib(median(d.idle)),
          mib(goIdle),
          x(median(d.idle), goIdle),
          `≤ 1.2× Node floor (${mib(fl.rss)}): ${(median(d.idle) / fl.rss).toFixed(2)}×`,
        ),
        row(
          `  the TLS floor: an idle Node HTTPS server and client (median of ${STARTS})`,
          mib(tlsFloor.rss),
          '',
          '',
          `${(tlsFloor.rss / fl.rss).toFixed(2)}× the Node floor; TS as deployed ${(median(d.idle) / tlsFloor.rss).toFixed(2)}× it`,
        ),
        row(
          `RSS 3 s after converging ${FEW}`,
          opt(d.rssFew, mib),
          opt(g.rssFew, mib),
          x(d.rssFew, g.rssFew),
          '≤ 1.5×',
        ),
        row(
          `RSS 3 s after converging ${MANY}`,
          opt(d.rssMany, mib),
          opt(g.rssMany, mib),
          many ? x(d.rssMany, g.rssMany) : 'AIOPS_BENCH_PEER_MANY=1',
          '',
        ),
        row(
          `process start → /readyz 200 (median of ${STARTS})`,
          ms(median(d.ready)),
          ms(goReady),
          x(median(d.ready), goReady),
          `≤ 100 ms (Node floor ${ms(fl.readyMs)})`,
        ),
        row(
          `  the start floor: its requests and listeners, no operator code (median of ${STARTS})`,
          ms(median(results.get(startFloor).ready)),
          '',
          '',
          `TS as deployed ${ms(median(d.ready) - median(results.get(startFloor).ready))} above it`,
        ),
        row(
          'apiserver requests per AITask, 4 workers',
          opt(d.requests[4]?.perTask, (v) => v.toFixed(2)),
          opt(g.requests[4]?.perTask, (v) => v.toFixed(2)),
          x(d.requests[4]?.perTask, g.requests[4]?.perTask),
          '',
        ),
      ],
    );
    for (const r of [deployed, go])
      process.stdout.write(`requests per AITask, ${r.label}: ${results.get(r).requests[4]?.detail ?? '—'}\n`);
    if (all.length <= 2) return;
    printTable(
      'the bundle without each of the image flags, and the baseline bundle if given (ratios to the same-run Go figure)',
      ['run', 'converge 4 workers', 'CPU', 'RSS idle', `RSS after ${FEW}`, 'start → /readyz'],
      all
        .filter((r) => !r.go)
        .map((r) => {
          const f = results.get(r);
          return [
            r.label,
            `${opt(f.converge[4], secs)} (${x(f.converge[4], g.converge[4])})`,
            `${opt(f.cpu[4], secs)} (${x(f.cpu[4], g.cpu[4])})`,
            `${mib(median(f.idle))} (${x(median(f.idle), goIdle)})`,
            `${opt(f.rssFew, mib)} (${x(f.rssFew, g.rssFew)})`,
            `${ms(median(f.ready))} (${x(median(f.ready), goReady)})`,
          ];
        }),
    );
  } finally {
    await prometheus.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
