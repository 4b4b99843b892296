// Bench section `steady`: what thousands of AITasks cost once nothing changes, the
// operator as deployed side by side with the Go controller-runtime peer (test/bench/go-peer)
// on the same tasks in the same run. N AITasks (AIOPS_BENCH_STEADY_TASKS, default 10,000),
// 100 to a namespace, intervalSeconds 10, each on a paused Deployment of its own with a
// metric within threshold; each controller in turn runs as one ServiceAccount over all
// namespaces (label selector), and once every task is converged and reconciled by it, plus
// one interval, a window (AIOPS_BENCH_STEADY_WINDOW_SECONDS, default 180) is measured minute
// by minute: Prometheus' own query count, the apiserver's count of the controller's requests
// by verb (steady-probe.ts says how they are told apart), CPU time and RSS of the process,
// reconcile time p50/p99 and evaluation lateness p99 from its /metrics. Then the same with
// AIOPS_BENCH_STEADY_BREACH_PERCENT (default 10) of the tasks breaching: a Noop remediation
// with cooldownSeconds 60, so each of them writes its decision and outcome (two status
// writes, two Events) about once a minute. AIOPS_BENCH_STEADY_WORKERS sets both
// controllers' workers (default the operator's default); AIOPS_BENCH_PEER_NODE_FLAGS adds
// Node flags to the operator (e.g. `--cpu-prof --cpu-prof-dir=DIR`). The namespaces are left
// to the environment's teardown.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeTransport } from '../../lib/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { DEFAULT_MAX_CONCURRENT_RECONCILES } from '../../operator/flags.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { bundleOperator, OPERATOR_MAIN } from '../../scripts/lib/esbuild.ts';
import { startPrometheus } from '../../scripts/lib/prometheus.ts';
import type { Environment } from '../support/environment.ts';
import {
  clients,
  converged,
  deployment,
  mib,
  namespace,
  pool,
  sayer,
  secs,
  sleep,
  type Clients,
} from './fixtures.ts';
import { imageRuntime } from '../support/image-runtime.ts';
import {
  buildGoPeer,
  bundleRunner,
  cpuMsOf,
  goRunner,
  metricsText,
  rssOf,
  type PeerProc,
  type Runner,
  type Scope,
} from './peer-procs.ts';
import {
  bucketDelta,
  flowRequests,
  histogram,
  installBenchIdentity,
  mainThreadCpuMsOf,
  observations,
  prometheusQueries,
  quantile,
  sumSeries,
  VERBS,
  WRITES,
  type Buckets,
  type Counted,
  type Verb,
} from './steady-probe.ts';
import { ms, printTable } from './stats.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const say = sayer('steady');
const INTERVAL_SECONDS = 10;
const PER_NAMESPACE = 100;
const COOLDOWN_SECONDS = 60;
const LABEL = 'aiops.example.com/bench';
/** Longest a controller may take to converge and reconcile every task once. */
const CONVERGE_DEADLINE_MS = 45 * 60_000;
const SETUP_WIDTH = 32;

/** The section's knobs, from the environment. */
interface Config {
  readonly tasks: number;
  readonly windowMs: number;
  readonly workers: number;
  readonly breachPercent: number;
}

function config(): Config {
  const num = (name: string, fallback: number): number => {
    const raw = process.env[name];
    const v = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number ≥ 0, not ${raw ?? ''}`);
    return v;
  };
  return {
    tasks: Math.max(1, Math.round(num('AIOPS_BENCH_STEADY_TASKS', 10_000))),
    windowMs: Math.max(10, num('AIOPS_BENCH_STEADY_WINDOW_SECONDS', 180)) * 1000,
    workers: Math.max(1, Math.round(num('AIOPS_BENCH_STEADY_WORKERS', DEFAULT_MAX_CONCURRENT_RECONCILES))),
    breachPercent: Math.min(100, num('AIOPS_BENCH_STEADY_BREACH_PERCENT', 10)),
  };
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

function task(i: number, label: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: `t-${i}`, labels: { [LABEL]: label } },
    spec: {
      target: { kind: 'Deployment', name: `web-${i}` },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop', cooldownSeconds: COOLDOWN_SECONDS },
      intervalSeconds: INTERVAL_SECONDS,
    },
  };
}

/** Namespace of task `i`. */
const nsOf = (prefix: string, i: number): string => `${prefix}-${Math.floor(i / PER_NAMESPACE)}`;

/** Creates the namespaces, Deployments and AITasks 0 … n-1 (not measured). */
async function populate(c: Clients, prefix: string, n: number, label: string): Promise<void> {
  const namespaces = Array.from({ length: Math.ceil(n / PER_NAMESPACE) }, (_, k) => `${prefix}-${k}`);
  await pool(namespaces, SETUP_WIDTH, (ns) => namespace(c, ns));
  const ids = Array.from({ length: n }, (_, i) => i);
  await pool(ids, SETUP_WIDTH, (i) => c.deployments.create(nsOf(prefix, i), deployment(i)));
  await pool(ids, SETUP_WIDTH, (i) => c.tasks.create(nsOf(prefix, i), task(i, label)));
}

/** One read of every counter the window needs. */
interface Sample {
  readonly at: number;
  readonly queries: number;
  readonly verbs: Record<Counted, number>;
  readonly cpuMs: number;
  readonly mainCpuMs: number;
  readonly rss: number;
  readonly reconciles: number;
  readonly reconcile: Buckets;
  readonly lateness: Buckets;
}

async function sample(p: PeerProc, admin: KubeTransport, prometheusUrl: string): Promise<Sample> {
  const [text, verbs, queries] = await Promise.all([
    metricsText(p.metricsUrl),
    flowRequests(admin),
    prometheusQueries(prometheusUrl),
  ]);
  return {
    at: performance.now(),
    queries,
    verbs,
    cpuMs: cpuMsOf(p.pid),
    mainCpuMs: mainThreadCpuMsOf(p.pid),
    rss: rssOf(p.pid),
    reconciles: sumSeries(text, 'controller_runtime_reconcile_total'),
    reconcile: histogram(text, 'controller_runtime_reconcile_time_seconds'),
    lateness: histogram(text, 'aiops_evaluation_lateness_seconds'),
  };
}

/** What happened between two samples, per minute where it is a count. */
interface Span {
  readonly minutes: number;
  readonly queries: number;
  readonly verbs: Record<Verb, number>;
  /** Lease requests (leader election), all verbs. */
  readonly lease: number;
  readonly writes: number;
  readonly cpuS: number;
  /** Of cpuS, the main thread's (for Go, the thread the process started on: not meaningful). */
  readonly mainCpuS: number;
  readonly reconciles: number;
  readonly reconcileP50: number;
  readonly reconcileP99: number;
  readonly lateP99: number;
  readonly lateCount: number;
  readonly rssEnd: number;
}

function span(a: Sample, b: Sample): Span {
  const minutes = (b.at - a.at) / 60_000;
  const verbs = Object.fromEntries(VERBS.map((v) => [v, (b.verbs[v] - a.verbs[v]) / minutes])) as Record<
    Verb,
    number
  >;
  const reconcile = bucketDelta(a.reconcile, b.reconcile);
  const lateness = bucketDelta(a.lateness, b.lateness);
  return {
    minutes,
    queries: (b.queries - a.queries) / minutes,
    verbs,
    lease: (b.verbs.lease - a.verbs.lease) / minutes,
    writes: WRITES.reduce((s, v) => s + verbs[v], 0),
    cpuS: (b.cpuMs - a.cpuMs) / 1000 / minutes,
    mainCpuS: (b.mainCpuMs - a.mainCpuMs) / 1000 / minutes,
    reconciles: (b.reconciles - a.reconciles) / minutes,
    reconcileP50: quantile(reconcile, 0.5),
    reconcileP99: quantile(reconcile, 0.99),
    lateP99: quantile(lateness, 0.99),
    lateCount: observations(lateness),
    rssEnd: b.rss,
  };
}

/** One controller's run in one phase. */
interface Run {
  readonly convergeMs: number;
  readonly samples: readonly Sample[];
}

/** What every run shares. */
interface Ctx {
  readonly c: Clients;
  readonly admin: KubeTransport;
  readonly prometheusUrl: string;
  readonly scope: Scope;
  readonly selector: string;
  readonly cfg: Config;
}

/** Starts `r`, waits for convergence and one interval, then samples the window each minute. */
async function measure(ctx: Ctx, r: Runner): Promise<Run> {
  const { cfg } = ctx;
  const watching = converged(ctx.c.tasks, { labelSelector: ctx.selector }, cfg.tasks);
  const t0 = performance.now();
  const p = await r.start(ctx.scope, cfg.workers);
  try {
    await watching;
    while (sumSeries(await metricsText(p.metricsUrl), 'controller_runtime_reconcile_total') < cfg.tasks) {
      if (!p.alive()) throw new Error(`${r.label} exited`);
      if (performance.now() - t0 > CONVERGE_DEADLINE_MS)
        throw new Error(`${r.label} did not reconcile every task`);
      await sleep(1000);
    }
    const convergeMs = performance.now() - t0;
    say(`${r.label}: ${cfg.tasks} converged and reconciled in ${secs(convergeMs)}; load ${load()}`);
    await sleep(INTERVAL_SECONDS * 1000);
    const samples = [await sample(p, ctx.admin, ctx.prometheusUrl)];
    const end = (samples[0]?.at ?? 0) + cfg.windowMs;
    while (performance.now() < end - 1000) {
      await sleep(Math.min(60_000, end - performance.now()));
      samples.push(await sample(p, ctx.admin, ctx.prometheusUrl));
      const last = span(samples.at(-2) as Sample, samples.at(-1) as Sample);
      say(
        `${r.label}: ${last.queries.toFixed(0)} queries/min, ${last.writes.toFixed(0)} writes/min, CPU ${last.cpuS.toFixed(2)} s/min, lateness p99 ${ms(last.lateP99 * 1000)}; load ${load()}`,
      );
      if (!p.alive()) throw new Error(`${r.label} exited`);
    }
    return { convergeMs, samples };
  } finally {
    await p.stop();
  }
}

const f0 = (v: number): string => (Number.isNaN(v) ? '—' : v.toFixed(0));
const f1 = (v: number): string => (Number.isNaN(v) ? '—' : v.toFixed(1));
const f2 = (v: number): string => (Number.isNaN(v) ? '—' : v.toFixed(2));
const msOf = (s: number): string => (Number.isNaN(s) ? '—' : ms(s * 1000));
const verbList = (verbs: Record<Verb, number>): string =>
  VERBS.filter((v) => verbs[v] > 0)
    .map((v) => `${v} ${f1(verbs[v])}`)
    .join(', ') || '0';

/** The per-minute table of one run. */
function printRun(title: string, cfg: Config, run: Run): void {
  const rows = run.samples.slice(1).map((b, i) => {
    const s = span(run.samples[i] as Sample, b);
    const perTaskPerInterval = s.queries / (cfg.tasks * (60 / INTERVAL_SECONDS));
    return [
      `${i + 1}${s.minutes < 0.99 ? ` (${f1(s.minutes * 60)} s)` : ''}`,
      f0(s.queries),
      f2(perTaskPerInterval),
      verbList(s.verbs),
      f1(s.writes),
      f1(s.lease),
      f2(s.cpuS),
      f0(s.reconciles),
      `${msOf(s.reconcileP50)} / ${msOf(s.reconcileP99)}`,
      msOf(s.lateP99),
      mib(s.rssEnd),
    ];
  });
  printTable(
    title,
    [
      'minute',
      'Prom queries/min',
      'per task per interval',
      'apiserver requests/min by verb (Leases apart)',
      'writes/min',
      'Lease requests/min',
      'CPU s/min',
      'reconciles/min',
      'reconcile p50 / p99',
      'lateness p99',
      'RSS at end',
    ],
    rows,
  );
}

/** The window's totals of TS and Go side by side. */
function printSideBySide(title: string, cfg: Config, ts: Run, go: Run): void {
  const whole = (r: Run): Span => span(r.samples[0] as Sample, r.samples.at(-1) as Sample);
  const [t, g] = [whole(ts), whole(go)];
  const x = (a: number, b: number): string =>
    b > 0 && Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '—';
  const rssOf2 = (r: Run): string => `${mib(r.samples[0]?.rss ?? 0)} → ${mib(r.samples.at(-1)?.rss ?? 0)}`;
  const perTask = (s: Span): string => f2(s.queries / (cfg.tasks * (60 / INTERVAL_SECONDS)));
  printTable(
    title,
    ['figure (per minute of the window unless said)', 'TS as deployed', 'Go', 'ratio'],
    [
      ['converge and reconcile every task once (from spawn)', secs(ts.convergeMs), secs(go.convergeMs), ''],
      ['Prometheus queries', f0(t.queries), f0(g.queries), x(t.queries, g.queries)],
      ['  per task per interval', perTask(t), perTask(g), ''],
      ['apiserver requests by verb (Leases apart)', verbList(t.verbs), verbList(g.verbs), ''],
      ['apiserver writes (create, update, patch, delete)', f1(t.writes), f1(g.writes), x(t.writes, g.writes)],
      ['Lease requests of the leader election (all verbs)', f1(t.lease), f1(g.lease), x(t.lease, g.lease)],
      ['CPU seconds of the process', f2(t.cpuS), f2(g.cpuS), x(t.cpuS, g.cpuS)],
      ['  of which its main thread (TS: the event loop)', f2(t.mainCpuS), '', ''],
      ['reconciles', f0(t.reconciles), f0(g.reconciles), x(t.reconciles, g.reconciles)],
      ['reconcile time p50', msOf(t.reconcileP50), msOf(g.reconcileP50), x(t.reconcileP50, g.reconcileP50)],
      ['reconcile time p99', msOf(t.reconcileP99), msOf(g.reconcileP99), x(t.reconcileP99, g.reconcileP99)],
      [
        `evaluation lateness p99 (interval ${INTERVAL_SECONDS} s; evaluations in the window)`,
        `${msOf(t.lateP99)} (${f0(t.lateCount)})`,
        `${msOf(g.lateP99)} (${f0(g.lateCount)})`,
        x(t.lateP99, g.lateP99),
      ],
      ['RSS at the start → end of the window', rssOf2(ts), rssOf2(go), x(t.rssEnd, g.rssEnd)],
    ],
  );
}

/** The section; `env` is the shared environment of `npm run bench`. */
export async function bench(env: Environment): Promise<void> {
  const cfg = config();
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-steady-'));
  await bundleOperator(join(dir, 'operator'));
  const goBinary = buildGoPeer();
  const admin = await KubeTransport.create({ kubeconfig: env.cluster.kubeconfigPath });
  const c = clients(admin);
  const prometheus = await startPrometheus([]);
  try {
    const kubeconfig = await installBenchIdentity(admin, env.cluster.kubeconfigPath, dir, (k) =>
      KubeTransport.create({ kubeconfig: k }),
    );
    const id = Date.now().toString(36);
    const prefix = `bench-steady-${id}`;
    const label = `steady-${id}`;
    const selector = `${LABEL}=${label}`;
    const image = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
    const runnerCtx = {
      kubeconfig,
      prometheusUrl: prometheus.url,
      bundle: join(dir, 'operator', OPERATOR_MAIN),
      certDir: createServingCert(join(dir, 'certs')).dir,
      extraNodeFlags: (process.env['AIOPS_BENCH_PEER_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== ''),
    };
    const ts = bundleRunner(runnerCtx, 'TS as deployed', image.nodeFlags, image.env);
    const go = goRunner(runnerCtx, goBinary);
    const loads = [load()];
    say(
      `${cfg.tasks} AITasks over ${Math.ceil(cfg.tasks / PER_NAMESPACE)} namespaces; load ${loads[0] ?? ''}`,
    );
    await populate(c, prefix, cfg.tasks, label);
    say(`populated in ${secs(performance.now() - started)}; load ${load()}`);
    const ctx: Ctx = {
      c,
      admin,
      prometheusUrl: prometheus.url,
      scope: { labelSelector: selector, leaseNamespace: `${prefix}-0` },
      selector,
      cfg,
    };
    const quiet = { ts: await measure(ctx, ts), go: await measure(ctx, go) };
    loads.push(load());
    const breaching = Array.from({ length: cfg.tasks }, (_, i) => i).filter(
      (i) => i % Math.round(100 / Math.max(cfg.breachPercent, 1)) === 0 && cfg.breachPercent > 0,
    );
    await pool(breaching, SETUP_WIDTH, (i) =>
      c.tasks.patch(nsOf(prefix, i), `t-${i}`, { spec: { trigger: { query: 'vector(2)' } } }),
    );
    say(`${breaching.length} tasks now breach (Noop, cooldownSeconds ${COOLDOWN_SECONDS})`);
    const busy = { ts: await measure(ctx, ts), go: await measure(ctx, go) };
    loads.push(load());

    const window = `window ${f0(cfg.windowMs / 1000)} s after convergence + one interval`;
    const head = `${cfg.tasks} AITasks in ${Math.ceil(cfg.tasks / PER_NAMESPACE)} namespaces, intervalSeconds ${INTERVAL_SECONDS}, ${cfg.workers} workers, ${window}`;
    printRun(`steady, nothing to do, TS as deployed (${head})`, cfg, quiet.ts);
    printRun(`steady, nothing to do, Go controller-runtime (${head})`, cfg, quiet.go);
    printRun(`steady, ${breaching.length} breaching, TS as deployed (${head})`, cfg, busy.ts);
    printRun(`steady, ${breaching.length} breaching, Go controller-runtime (${head})`, cfg, busy.go);
    printSideBySide(
      `steady, nothing to do: TS vs Go (${head}; load average ${loads.join(' → ')})`,
      cfg,
      quiet.ts,
      quiet.go,
    );
    printSideBySide(
      `steady, ${breaching.length} of ${cfg.tasks} breaching (Noop, cooldownSeconds ${COOLDOWN_SECONDS}): TS vs Go (${head}; section took ${secs(performance.now() - started)})`,
      cfg,
      busy.ts,
      busy.go,
    );
  } finally {
    await prometheus.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
