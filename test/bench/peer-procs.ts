// The processes of bench section `peer` (peer.ts): the operator's bundle as the image runs
// it (or with one of the image's Node flags or environment variables left out) and the Go
// controller-runtime peer (test/bench/go-peer, built on demand by build-control-plane.sh
// go-peer into the cache), each started against one namespace (or a label selector over all
// namespaces) with a number of reconcile workers and timed from spawn to /readyz 200; their RSS; and the apiserver's own request
// counters, to count requests per AITask.

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { sleep } from './fixtures.ts';
import { containerEnv } from './memory.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A started operator or peer. */
export interface PeerProc {
  readonly pid: number;
  /** Milliseconds from spawn to the first 200 of /readyz. */
  readonly readyMs: number;
  /** Its plain-HTTP /metrics URL. */
  readonly metricsUrl: string;
  /** Whether it is still running. */
  alive(): boolean;
  /** SIGTERM, then resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * What a controller reconciles: the AITasks of one namespace (its Lease there too), or those
 * of every namespace matching a label selector, the Lease in `leaseNamespace`.
 */
export type Scope = string | { readonly labelSelector: string; readonly leaseNamespace: string };

/** One way to run a controller: a label for the tables and how to start it. */
export interface Runner {
  readonly label: string;
  /** True for the Go peer (the baseline of every ratio). */
  readonly go: boolean;
  start(scope: Scope, workers: number): Promise<PeerProc>;
}

/** The flags of `scope` (the operator and the Go peer name them alike). */
function scopeFlags(scope: Scope): string[] {
  return typeof scope === 'string'
    ? [`--namespace=${scope}`, `--leader-election-namespace=${scope}`]
    : [
        `--watch-label-selector=${scope.labelSelector}`,
        `--leader-election-namespace=${scope.leaseNamespace}`,
      ];
}

/** Resident set size of `pid` in bytes. */
export function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** CPU time (user + system) `pid` has used so far, in ms. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Spawns `command args` with exactly `env` and polls `readyUrl` every 5 ms until it answers
 * 200 (60 s deadline).
 */
export async function spawnReady(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  readyUrl: string,
  metricsUrl = '',
): Promise<PeerProc> {
  const t0 = performance.now();
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  // A bench that exits early (an error, SIGINT) takes its operators with it.
  const orphaned = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', orphaned);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      process.off('exit', orphaned);
      r();
    }),
  );
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  for (;;) {
    if (!alive()) throw new Error(`${command} exited: ${stderr}`);
    const ok = await fetch(readyUrl).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (performance.now() - t0 > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`${command} not ready in 60 s: ${stderr}`);
    }
    await sleep(5);
  }
  return {
    pid: child.pid ?? 0,
    readyMs: performance.now() - t0,
    metricsUrl,
    alive,
    stop: async () => {
      if (alive()) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What every runner needs: the cluster, Prometheus, and where the bundle is. */
export interface RunnerContext {
  readonly kubeconfig: string;
  readonly prometheusUrl: string;
  /** The operator bundle as the image has it. */
  readonly bundle: string;
  /** `--webhook-cert-dir` of the operator (the hosted webhook is on, as deployed). */
  readonly certDir: string;
  /** Extra Node flags for every operator run (e.g. --cpu-prof), from AIOPS_BENCH_PEER_NODE_FLAGS. */
  readonly extraNodeFlags: readonly string[];
}

/**
 * The operator bundle run by `node nodeFlags bundle` in a container's environment with `env`
 * (memory.ts's containerEnv: nothing of this machine's), leader election and the hosted
 * webhook on, as memory.ts runs it.
 */
export function bundleRunner(
  ctx: RunnerContext,
  label: string,
  nodeFlags: readonly string[],
  env: Record<string, string>,
): Runner {
  return {
    label,
    go: false,
    start: async (scope, workers) => {
      const [metrics = 0, health = 0, webhook = 0] = await freePorts(3);
      return spawnReady(
        process.execPath,
        [
          ...nodeFlags,
          ...ctx.extraNodeFlags,
          ctx.bundle,
          `--kubeconfig=${ctx.kubeconfig}`,
          ...scopeFlags(scope),
          '--leader-elect',
          '--bind-address=127.0.0.1',
          `--metrics-port=${metrics}`,
          '--metrics-secure=false',
          `--health-port=${health}`,
          `--webhook-port=${webhook}`,
          `--webhook-cert-dir=${ctx.certDir}`,
          `--prometheus-url=${ctx.prometheusUrl}`,
          `--max-concurrent-reconciles=${workers}`,
          '--log-level=warn',
        ],
        containerEnv(env),
        `http://127.0.0.1:${health}/readyz`,
        `http://127.0.0.1:${metrics}/metrics`,
      );
    },
  };
}

/** Builds the Go peer (cached by its sources' hash) and returns its path. */
export function buildGoPeer(): string {
  const bin = execFileSync('bash', [join(root, 'test/harness/build-control-plane.sh'), 'go-peer'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return join(bin, 'go-peer');
}

/** The Go controller-runtime peer at `binary`, with leader election, querying the same Prometheus. */
export function goRunner(ctx: RunnerContext, binary: string): Runner {
  return {
    label: 'Go controller-runtime',
    go: true,
    start: async (scope, workers) => {
      const [metrics = 0, health = 0] = await freePorts(2);
      return spawnReady(
        binary,
        [
          `--kubeconfig=${ctx.kubeconfig}`,
          ...scopeFlags(scope),
          '--leader-elect',
          `--metrics-bind-address=127.0.0.1:${metrics}`,
          `--health-probe-bind-address=127.0.0.1:${health}`,
          `--prometheus-url=${ctx.prometheusUrl}`,
          `--max-concurrent-reconciles=${workers}`,
          '--zap-log-level=error',
        ],
        containerEnv({}),
        `http://127.0.0.1:${health}/readyz`,
        `http://127.0.0.1:${metrics}/metrics`,
      );
    },
  };
}

/** The text of `url` (a /metrics page), '' when unreadable. */
export async function metricsText(url: string): Promise<string> {
  return fetch(url).then(
    (r) => r.text(),
    () => '',
  );
}

/** The sum of every `controller_runtime_reconcile_total` series at `metricsUrl` (0 when unreadable). */
export async function reconcilesOf(metricsUrl: string): Promise<number> {
  const text = await fetch(metricsUrl).then(
    (r) => r.text(),
    () => '',
  );
  let sum = 0;
  for (const m of text.matchAll(/^controller_runtime_reconcile_total\{[^}]*\} (\S+)$/gm)) sum += Number(m[1]);
  return sum;
}

/** Resources whose requests are counted per AITask. */
const COUNTED = new Set(['aitasks', 'controllerrevisions', 'events', 'deployments', 'leases']);

/**
 * The apiserver's `apiserver_request_total` for COUNTED resources, summed by
 * `VERB resource[/subresource]` (WATCH and LIST included).
 */
export async function apiserverRequests(transport: KubeTransport): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await transport.stream({ path: '/metrics' }, (line) => {
    if (!line.startsWith('apiserver_request_total{')) return;
    const label = (n: string): string => new RegExp(`[{,]${n}="([^"]*)"`).exec(line)?.[1] ?? '';
    const resource = label('resource');
    if (!COUNTED.has(resource)) return;
    const sub = label('subresource');
    // The controller-manager's Deployment status writes (the fixtures' paused Deployments), not ours.
    if (resource === 'deployments' && sub === 'status') return;
    const key = `${label('verb')} ${resource}${sub === '' ? '' : `/${sub}`}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  });
  return out;
}

/** `after - before` per key, keys with a difference only, as `VERB resource: n/task` sorted by count. */
export function requestsPerTask(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  tasks: number,
): { perTask: number; detail: string } {
  const diff = [...after]
    .map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const)
    .filter(([, d]) => d > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = diff.reduce((s, [, d]) => s + d, 0);
  return {
    perTask: total / tasks,
    detail: diff.map(([k, d]) => `${k} ${(d / tasks).toFixed(2)}`).join(', '),
  };
}
