// Bench section `memory`: the operator as deployed (dist/operator/ bundled as the image
// has it, run by `node` with the environment the Dockerfile's runtime stage sets, leader
// election and the hosted webhook on) as a plain process against the environment's cluster
// and a real Prometheus. Measures start → /readyz 200 on an empty namespace, RSS idle, RSS
// with 1,000 and then 10,000 AITasks and their Deployments cached and converged, and the
// webhook's RSS after a 10,000-object ConversionReview (what a first LIST at v1 sends) —
// each next to an idle Node HTTP server started the same way in the same run (the floor),
// with its targets — and RSS with 1,500 AITasks each carrying a 250 KiB annotation, cached
// trimmed (as shipped) and untrimmed (a second bundle built with untrimmed-cache.ts in place
// of operator/runtime/trim.ts) in the same run, with their ratio. Progress goes to stderr,
// results to stdout.

import * as https from 'node:https';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import fc from 'fast-check';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { bundleOperator, OPERATOR_MAIN } from '../../scripts/lib/esbuild.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { startPrometheus } from '../../scripts/lib/prometheus.ts';
import { v1alpha1Task } from '../support/arbitraries.ts';
import type { Environment } from '../support/environment.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { clients, converged, mib, namespace, pool, populate, sayer, secs, sleep } from './fixtures.ts';
import { median, ms, printTable } from './stats.ts';
import { imageRuntime } from '../support/image-runtime.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const say = sayer('memory');
/** Wait after ready or convergence before reading RSS, so the process is at rest. */
const SETTLE_MS = 3000;
/** Starts timed for start → ready (median reported). */
const STARTS = 5;
const FEW = 1000;
const MANY = 10_000;
/** Objects in the ConversionReview sent to the hosted webhook. */
const REVIEW_N = 10_000;
const MiB = 2 ** 20;
/** AITasks of the oversized measure, each with an OVERSIZED_BYTES annotation. */
const OVERSIZED = 1500;
/** 250 KiB: just under the apiserver's 256 KiB limit on an object's annotations. */
const OVERSIZED_BYTES = 250 * 1024;

/** The modules the untrimmed baseline bundles in place of the shipped ones. */
const UNTRIMMED: Readonly<Record<string, string>> = {
  [join(root, 'operator/runtime/trim.ts')]: join(root, 'test/bench/untrimmed-cache.ts'),
  [join(root, 'operator/runtime/memory-ledger.ts')]: join(root, 'test/bench/unbounded-ledger.ts'),
};
/**
 * esbuild plugin: every import of trim.ts resolves to untrimmed-cache.ts and of
 * memory-ledger.ts to unbounded-ledger.ts, but the stand-in's own import of what it stands in for.
 */
const untrimmedCache: Plugin = {
  name: 'untrimmed-cache',
  setup(b) {
    b.onResolve({ filter: /(trim|memory-ledger)\.ts$/ }, (args) => {
      const standIn = UNTRIMMED[resolve(args.resolveDir, args.path)];
      return standIn !== undefined && args.importer !== standIn ? { path: standIn } : undefined;
    });
  },
};

/**
 * The environment of a container of the image: `env` (the image's ENV, or a variant of it,
 * plus what a Deployment would set) over the PATH and HOME every container has, and nothing
 * else of this machine's (a NODE_EXTRA_CA_CERTS or NODE_OPTIONS set here would make Node load
 * what the operator as deployed never does, and skew its start and memory).
 */
export function containerEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin', HOME: '/home/node', ...env };
}

/** Resident set size of `pid` in bytes. */
function rss(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

interface Proc {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Milliseconds from spawn to the first answer of `readyUrl` with 200. */
  readonly readyMs: number;
  stop(): Promise<void>;
}

/** Spawns `node args` with `env` and polls `readyUrl` every 5 ms until it answers 200. */
async function spawnReady(args: readonly string[], env: Record<string, string>, readyUrl: string) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: containerEnv(env),
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited: ${stderr}`);
    if (
      await fetch(readyUrl).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (performance.now() - t0 > 60_000) throw new Error(`not ready in 60 s: ${stderr}`);
    await sleep(5);
  }
  const proc: Proc = {
    child,
    pid: child.pid ?? 0,
    readyMs: performance.now() - t0,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  return proc;
}

/** One ConversionReview of `n` v1alpha1 objects to v2, over HTTPS. */
function review(port: number, ca: string, n: number): Promise<void> {
  const body = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: {
      uid: 'bench',
      desiredAPIVersion: 'aiops.example.com/v2',
      objects: fc.sample(v1alpha1Task, { numRuns: n, seed: 16 }),
    },
  });
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/convert', ca, servername: 'localhost' },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode ?? 0}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ratioTo = (value: number, target: number): string => `${(value / target).toFixed(2)} of target`;

/** AITask `i` of the oversized measure: a missing target (nothing to act on) and `blob` as an annotation. */
function oversizedTask(i: number, blob: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: `big-${i}`, annotations: { 'bench.example.com/blob': blob } },
    spec: {
      target: { kind: 'Deployment', name: `none-${i}` },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

/** The value of `name{resource="…"}` in a /metrics text (0 when absent). */
function gauge(text: string, name: string, resource: string): number {
  const m = new RegExp(`^${name}\\{resource="${resource}"\\} (\\S+)$`, 'm').exec(text);
  return Number(m?.[1] ?? 0);
}

/** The table row of the oversized measure: trimmed RSS against untrimmed, measured in the same run. */
function oversizedRow(
  trimmed: { rss: number; cacheBytes: number } | string,
  untrimmed: { rss: number; cacheBytes: number } | string,
): string[] {
  const show = (r: { rss: number; cacheBytes: number } | string): string =>
    typeof r === 'string' ? r : `${mib(r.rss)} (cache ${mib(r.cacheBytes)})`;
  return [
    `RSS, ${OVERSIZED} AITasks with ${OVERSIZED_BYTES / 1024} KiB annotations cached (trimmed)`,
    show(trimmed),
    `untrimmed: ${show(untrimmed)}`,
    typeof trimmed === 'string' || typeof untrimmed === 'string'
      ? ''
      : `${(trimmed.rss / untrimmed.rss).toFixed(2)}x untrimmed`,
    '≤ 384 MiB (the limit)',
    typeof trimmed === 'string' ? '' : ratioTo(trimmed.rss, 384 * MiB),
  ];
}

/**
 * The section; `env` is the shared environment of `npm run bench`. `only: 'oversized'` runs
 * the oversized-annotation measure alone (section `memory-oversized`).
 */
export async function bench(env: Environment, only?: 'oversized'): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-memory-'));
  await bundleOperator(join(dir, 'operator'));
  const bundle = join(dir, 'operator', OPERATOR_MAIN);
  const image = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  say(
    `bundled ${bundle}; image environment ${JSON.stringify(image.env)}, node flags ${image.nodeFlags.join(' ')}`,
  );
  const cert = createServingCert(join(dir, 'certs'));
  const kubeconfig = env.cluster.kubeconfigPath;
  const c = clients(await KubeTransport.create({ kubeconfig }));
  const prometheus = await startPrometheus([]);
  const running = new Set<Proc>();
  /** The operator of bundle `main` (default: as shipped) on `ns`, once ready. */
  const operator = async (
    ns: string,
    main = bundle,
  ): Promise<Proc & { webhookPort: number; metricsPort: number }> => {
    const [metrics = 0, health = 0, webhook = 0] = await freePorts(3);
    const p = await spawnReady(
      [
        ...image.nodeFlags,
        main,
        `--kubeconfig=${kubeconfig}`,
        `--namespace=${ns}`,
        '--leader-elect',
        `--leader-election-namespace=${ns}`,
        '--bind-address=127.0.0.1',
        `--metrics-port=${metrics}`,
        '--metrics-secure=false',
        `--health-port=${health}`,
        `--webhook-port=${webhook}`,
        `--webhook-cert-dir=${cert.dir}`,
        `--prometheus-url=${prometheus.url}`,
        '--log-level=warn',
      ],
      image.env,
      `http://127.0.0.1:${health}/readyz`,
    );
    running.add(p);
    return { ...p, webhookPort: webhook, metricsPort: metrics };
  };
  /**
   * RSS with OVERSIZED AITasks of OVERSIZED_BYTES annotations cached, trimmed and untrimmed
   * (one operator after the other on the same namespace).
   */
  const measureOversized = async () => {
    const bigNs = await namespace(c, `bench-memory-oversized-${Date.now().toString(36)}`);
    const blob = 'x'.repeat(OVERSIZED_BYTES);
    await pool(
      Array.from({ length: OVERSIZED }, (_, i) => i),
      8,
      (i) => c.tasks.create(bigNs, oversizedTask(i, blob)),
    );
    say(`${OVERSIZED} AITasks with ${OVERSIZED_BYTES / 1024} KiB annotations in ${bigNs}`);
    /** RSS once the operator has all of bigNs cached, or why it could not (it exited). */
    const cachedRss = async (main: string): Promise<{ rss: number; cacheBytes: number } | string> => {
      let p;
      try {
        p = await operator(bigNs, main);
      } catch (err) {
        return `never ready: ${(err as Error).message.slice(0, 200)}`;
      }
      try {
        for (;;) {
          if (p.child.exitCode !== null || p.child.signalCode !== null)
            return `exited (${p.child.exitCode ?? p.child.signalCode ?? ''})`;
          const text = await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`).then(
            (r) => r.text(),
            () => '',
          );
          if (gauge(text, 'aiops_cache_objects', 'aitasks') >= OVERSIZED) {
            await sleep(SETTLE_MS);
            return { rss: rss(p.pid), cacheBytes: gauge(text, 'aiops_cache_bytes', 'aitasks') };
          }
          await sleep(500);
        }
      } finally {
        await p.stop();
        running.delete(p);
      }
    };
    await bundleOperator(join(dir, 'operator-untrimmed'), [untrimmedCache]);
    const trimmed = await cachedRss(bundle);
    const untrimmed = await cachedRss(join(dir, 'operator-untrimmed', OPERATOR_MAIN));
    say(`oversized: trimmed ${JSON.stringify(trimmed)}, untrimmed ${JSON.stringify(untrimmed)}`);
    return [trimmed, untrimmed] as const;
  };
  try {
    if (only === 'oversized') {
      const [trimmed, untrimmed] = await measureOversized();
      printTable(
        `cache trimming, as deployed (section took ${secs(performance.now() - started)})`,
        ['measure', 'value', 'baseline in the same run', 'ratio', 'target', 'vs target'],
        [oversizedRow(trimmed, untrimmed)],
      );
      return;
    }
    const [floorPort = 0] = await freePorts(1);
    const floorStarts: number[] = [];
    const floorRsses: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const floor = await spawnReady(
        [
          ...image.nodeFlags,
          '-e',
          `require('node:http').createServer((q, s) => s.end()).listen(${floorPort})`,
        ],
        image.env,
        `http://127.0.0.1:${floorPort}/`,
      );
      floorStarts.push(floor.readyMs);
      await sleep(SETTLE_MS);
      floorRsses.push(rss(floor.pid));
      await floor.stop();
    }
    const floorRss = median(floorRsses);

    const idleNs = await namespace(c, `bench-memory-idle-${Date.now().toString(36)}`);
    const starts: number[] = [];
    const idles: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const op = await operator(idleNs);
      starts.push(op.readyMs);
      await sleep(SETTLE_MS);
      idles.push(rss(op.pid));
      await op.stop();
      running.delete(op);
    }
    const idleRss = median(idles);
    const hosting = await operator(idleNs);
    await sleep(SETTLE_MS);
    const hostingIdle = rss(hosting.pid);
    await review(hosting.webhookPort, cert.caPem, REVIEW_N);
    await sleep(SETTLE_MS);
    const reviewedRss = rss(hosting.pid);
    await hosting.stop();
    running.delete(hosting);
    say(
      `idle ${mib(idleRss)}; webhook ${mib(hostingIdle)}, after a ${REVIEW_N}-object review ${mib(reviewedRss)}`,
    );

    const ns = await namespace(c, `bench-memory-${Date.now().toString(36)}`);
    await populate(c, ns, 0, FEW);
    const op = await operator(ns);
    let t0 = performance.now();
    await converged(c.tasks, ns, FEW);
    const fewMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    const fewRss = rss(op.pid);
    say(`${FEW} converged in ${secs(fewMs)}: ${mib(fewRss)}; adding ${MANY - FEW}`);
    await populate(c, ns, FEW, MANY);
    t0 = performance.now();
    await converged(c.tasks, ns, MANY);
    const manyMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    const manyRss = rss(op.pid);
    await op.stop();
    running.delete(op);
    say(`${ns} is left to the environment's teardown`);

    const [trimmed, untrimmed] = await measureOversized();

    const floor = `idle Node HTTP server (median of ${STARTS}): ${mib(floorRss)}`;
    const vsFloor = (x: number): string => `${(x / floorRss).toFixed(2)}x floor`;
    /** A row of an RSS figure against the floor and its target (MiB). */
    const rssRow = (label: string, bytes: number, targetMiB: number): string[] => [
      label,
      mib(bytes),
      floor,
      vsFloor(bytes),
      `≤ ${targetMiB} MiB`,
      ratioTo(bytes, targetMiB * MiB),
    ];
    printTable(
      `memory and start-up as deployed (bundle, image env ${JSON.stringify(image)}; section took ${secs(performance.now() - started)})`,
      ['measure', 'value', 'floor in the same run', 'ratio', 'target', 'vs target'],
      [
        [
          'start → /readyz 200, empty namespace (median of 5)',
          ms(median(starts)),
          `idle Node server listening: ${ms(median(floorStarts))}`,
          `${(median(starts) / median(floorStarts)).toFixed(1)}x`,
          '≤ 500 ms',
          ratioTo(median(starts), 500),
        ],
        rssRow(`RSS idle (empty namespace, median of ${STARTS})`, idleRss, 70),
        rssRow(`RSS, ${FEW} AITasks + Deployments converged`, fewRss, 85),
        rssRow(`RSS, ${MANY} AITasks + Deployments converged`, manyRss, 244),
        [
          `webhook: RSS after a ${REVIEW_N}-object review − idle`,
          `${mib(reviewedRss - hostingIdle)} (${mib(reviewedRss)})`,
          `same process idle: ${mib(hostingIdle)}`,
          '',
          '≤ 20 MiB',
          ratioTo(reviewedRss - hostingIdle, 20 * MiB),
        ],
        oversizedRow(trimmed, untrimmed),
        [`  ${FEW} AITasks converge`, secs(fewMs), '', '', '', ''],
        [`  ${MANY - FEW} more converge`, secs(manyMs), '', '', '', ''],
      ],
    );
  } finally {
    await Promise.all([...running].map((p) => p.stop()));
    await prometheus.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
