// `npm test`: every test, on the real control plane. Starts the shared environment
// (test/support/environment.ts: cluster, conversion webhook, AITask CRD), runs all
// `*.test.ts` files with node:test, and tears everything down whatever the outcome.
// Each file runs in a node:test process of its own, AIOPS_TEST_CONCURRENCY at a time, the next
// being the first (by name) whose .ci/run builds have ended (scripts/test/file-order.ts). Files
// under test/real-node/ share the machine's one real node: they run one at a time, in a lane
// that holds one of those slots while it has files.
//
// At the end it names the ten slowest test files with their wall times (the runner's own,
// recorded by scripts/test/file-times-reporter.ts).
//
// Usage: npm test [-- [--busy[=PREFIX,...]] FILE...]   (default: every *.test.ts outside
//        node_modules and dist)
//        --busy (or `npm run test:busy`): a process spins on every core for the whole run
//        (scripts/test/cpu-hog.ts), so a test that holds only on an idle machine fails; under
//        .ci/run (AIOPS_BUILDS_DIR) it starts once the build lanes, which load every core
//        until then, have ended.
//        --busy=PREFIX,...: the files whose path starts with a PREFIX run first beside the
//        hog, then the others without it, on the same environment (what .ci/run does).
// Env:   AIOPS_TEST_CONCURRENCY (default 2 files at once), AIOPS_KEEP_CLUSTER=1 keeps the dir.
// Interrupted (SIGINT, SIGTERM), it stops the CPU hog, every process the tests started, then
// the environment, and exits 130 or 143.

import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { globSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_NET } from '../test/harness/real-node/layout.ts';
import { stopRealNode } from '../test/harness/real-node/node.ts';
import { buildEnded, buildsPending } from '../test/harness/pending-builds.ts';
import { startEnvironment } from '../test/support/environment.ts';
import { parseTestArgs, runsBusy } from './test/args.ts';
import { startCpuHog, type CpuHog } from './test/cpu-hog.ts';
import { parseFileTimes, slowestLines } from './test/file-times.ts';
import { buildsNeeded, nextFile, sourceReader } from './test/file-order.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg: string) => process.stderr.write(`[test] ${msg}\n`);

const { files: args, busy: busyPrefixes } = parseTestArgs(process.argv.slice(2));
const files = (
  args.length > 0
    ? [...args]
    : globSync('**/*.test.ts', {
        cwd: root,
        exclude: (f) => f === 'node_modules' || f === 'dist' || f.startsWith('node_modules/'),
      })
).sort();

/** How long an interrupted group has between SIGTERM and SIGKILL, in ms. */
const GROUP_GRACE_MS = 5_000;

/** Whether process group `pgid` still has a member. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM to each process group, SIGKILL to those still alive GROUP_GRACE_MS later. */
async function stopGroups(pgids: readonly number[]): Promise<void> {
  const signal = (pgid: number, sig: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, sig);
    } catch {
      // the group has already ended
    }
  };
  for (const g of pgids) signal(g, 'SIGTERM');
  const deadline = Date.now() + GROUP_GRACE_MS;
  while (pgids.some(groupAlive) && Date.now() < deadline) await sleep(100);
  for (const g of pgids) signal(g, 'SIGKILL');
}

/** The processes that make a real node live (containers' shims outlive a killed run). */
const NODE_DAEMONS = new Set(['containerd', 'kubelet', 'kube-proxy']);

/**
 * Tears down the real node of each test cluster made since `since` (ms) whose test file was
 * killed before its own teardown: its containers, mounts, network namespace, cgroups and
 * sysctls (stopRealNode; a no-op for a cluster without one). Nothing is touched while
 * containerd, the kubelet or kube-proxy still runs in the node's network namespace: that
 * node is another run's.
 */
async function stopRealNodesSince(since: number): Promise<void> {
  const inNode = spawnSync('ip', ['netns', 'pids', NODE_NET.netns], { encoding: 'utf8' }).stdout;
  const comm = (pid: string): string => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  };
  if (inNode.split('\n').some((pid) => NODE_DAEMONS.has(comm(pid)))) return;
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith('aiops-cluster-'))) {
    const dir = join(tmpdir(), name);
    if (statSync(dir).mtimeMs >= since)
      await stopRealNode(dir).catch((err: unknown) => say(`${dir}: ${String(err)}`));
  }
}

/** The `n` slowest files of the runs whose reporters wrote into `dir`, as lines to print. */
function slowestReport(dir: string, n = 10): string[] {
  const times = readdirSync(dir).flatMap((f) => parseFileTimes(readFileSync(join(dir, f), 'utf8')));
  return times.length === 0
    ? []
    : [`the ${Math.min(n, times.length)} slowest test files:`, ...slowestLines(times, n)];
}

const started = Date.now();
const timesDir = mkdtempSync(join(tmpdir(), 'aiops-test-times-'));
const reporter = join(root, 'scripts/test/file-times-reporter.ts');
let hog: CpuHog | undefined;
/** While .ci/run's builds still run: the poll that starts the hog once they have all ended. */
let hogWait: ReturnType<typeof setInterval> | undefined;
/** Stops the hog, or the wait to start it. */
const stopHog = async (): Promise<void> => {
  clearInterval(hogWait);
  hogWait = undefined;
  await hog?.stop();
  hog = undefined;
};
/**
 * Starts the CPU hog, or, while .ci/run's build lanes still compile (buildsPending), once they
 * have all ended: until then they load every core, and a hog beside them would take the CPU the
 * builds the later files wait for need, without loading the tests more.
 */
const startHog = (): string => {
  if (!buildsPending()) {
    hog = startCpuHog();
    return `, beside a CPU hog on each of ${hog.pids.length} cores`;
  }
  hogWait = setInterval(() => {
    if (buildsPending()) return;
    clearInterval(hogWait);
    hogWait = undefined;
    hog = startCpuHog();
    say(`.ci/run's builds ended: a CPU hog on each of ${hog.pids.length} cores from now on`);
  }, 1_000);
  return `, beside .ci/run's builds, then a CPU hog on every core once they end`;
};
/** Set once SIGINT or SIGTERM arrives: the stopping it does, which ends in process.exit. */
let interruption: Promise<void> | undefined;
let code: number;
const env = await startEnvironment(say, process.env['AIOPS_KEEP_CLUSTER'] === '1').catch((err: unknown) => {
  say(`setup failed: ${(err as Error).message}`);
  process.exit(1);
});
try {
  const concurrency = Number(process.env['AIOPS_TEST_CONCURRENCY'] ?? '2');
  const isBusy = (f: string): boolean => runsBusy(busyPrefixes, f);
  // One id for every node:test process, so what is built once per run is built once.
  const runId = `${process.pid}-${Date.now()}`;
  // Each node:test process leads a process group of its own, holding its test file and
  // every cluster, Prometheus and operator they start: interrupted (Ctrl-C, a CI timeout's
  // SIGTERM), this process ends each group whole instead of leaving them running.
  const groups: number[] = [];
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      say(`${signal}: stopping the CPU hog, the test processes and the environment`);
      interruption ??= stopHog()
        .then(() => stopGroups(groups))
        .then(() => stopRealNodesSince(started))
        .then(() => env.stop())
        .finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
    });
  /** Runs test `file` in a node:test process of its own; resolves with its exit code. */
  const runFile = (file: string, label: string): Promise<number> => {
    const run = spawn(
      process.execPath,
      [
        '--test',
        '--test-timeout=900000',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${reporter}`,
        `--test-reporter-destination=${join(timesDir, `${label}.jsonl`)}`,
        file,
      ],
      {
        cwd: root,
        stdio: 'inherit',
        detached: true,
        env: { ...process.env, ...env.env, AIOPS_TEST_RUN: runId },
      },
    );
    if (run.pid !== undefined) groups.push(run.pid);
    return new Promise<number>((resolve) => run.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  };
  /**
   * Runs the files of `group` one process each, at most `width()` at once, each next one
   * `pick`ed from those left (default: the first, in name order). `widen` starts more once
   * `width()` has grown. `done` is nonzero when any failed; no file starts once interrupted.
   */
  const runPool = (
    group: readonly string[],
    label: string,
    width: () => number,
    pick: (queue: readonly string[]) => string | undefined = (queue) => queue[0],
  ): { done: Promise<number>; widen: () => void } => {
    const queue = [...group];
    let running = 0;
    let failed = 0;
    let n = 0;
    let finish: (code: number) => void = () => undefined;
    const done = new Promise<number>((resolve) => (finish = resolve));
    const fill = (): void => {
      for (
        let file = pick(queue);
        file !== undefined && running < width() && !interruption;
        file = pick(queue)
      ) {
        queue.splice(queue.indexOf(file), 1);
        running++;
        void runFile(file, `${label}-${n++}`).then((code) => {
          if (code !== 0) failed = 1;
          running--;
          fill();
        });
      }
      if (running === 0 && (queue.length === 0 || interruption)) finish(failed);
    };
    fill();
    return { done, widen: fill };
  };
  /** Runs `group` (real-node files one at a time beside the others), beside the hog if `loaded`. */
  const runPhase = async (group: readonly string[], loaded: boolean, label: string): Promise<number> => {
    if (group.length === 0) return 0;
    const serial = group.filter((f) => f.startsWith('test/real-node/'));
    const parallel = group.filter((f) => !serial.includes(f));
    // The real-node lane takes one of the `concurrency` slots while it has files (beside two
    // others and a cold run's last builds, OLM's upgrade on the real node outran its waits);
    // the others get it back once the lane is done.
    let realNodeLeft = serial.length > 0;
    const width = (): number => (realNodeLeft ? Math.max(1, concurrency - 1) : concurrency);
    const beside = loaded ? startHog() : '';
    say(
      `running ${parallel.length} test files, ${width()} at a time${realNodeLeft ? ` (${concurrency} once the real-node files are done)` : ''}, and ${serial.length} real-node files one at a time${beside}`,
    );
    if (interruption) await interruption;
    // Each next file is the first whose .ci/run builds have ended, so a file waiting for a tool
    // still compiling (OLM's, the LLM server) does not hold a slot while others could run; the
    // real-node files go one at a time (they share the one node).
    const needs = new Map(group.map((f) => [f, buildsNeeded(f, sourceReader(root))]));
    const nextReady = (queue: readonly string[]): string | undefined =>
      queue.length === 0 ? undefined : nextFile(queue, (f) => needs.get(f) ?? new Set(), buildEnded);
    const pool = runPool(parallel, `${label}-parallel`, width, nextReady);
    const codes = await Promise.all([
      pool.done,
      runPool(serial, `${label}-real-node`, () => 1, nextReady).done.then((code) => {
        realNodeLeft = false;
        pool.widen();
        return code;
      }),
    ]);
    // Interrupted, the groups ended because they were stopped: the handler exits, not this.
    if (interruption) await interruption;
    await stopHog();
    return codes.some((c) => c !== 0) ? 1 : 0;
  };
  const busyCode = await runPhase(files.filter(isBusy), true, 'busy');
  const quietCode = await runPhase(
    files.filter((f) => !isBusy(f)),
    false,
    'quiet',
  );
  code = busyCode !== 0 || quietCode !== 0 ? 1 : 0;
} finally {
  if (interruption) await interruption;
  await stopHog();
  await env.stop();
}
for (const line of slowestReport(timesDir)) say(line);
rmSync(timesDir, { recursive: true, force: true });
say(`${code === 0 ? 'passed' : 'failed'} in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(code);
