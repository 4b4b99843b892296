// `npm start` as a newcomer types it, on a cluster of its own (AIOPS_CLUSTER_DIR in a temp
// dir): it comes up and the operator reconciles the samples; a missing Prometheus fails in
// one line; and Ctrl-C (SIGINT to the whole process group, as a terminal sends it) at every
// stage leaves no process and no temp dir of its own behind; each such case checks that its
// Ctrl-C came during the stage it names and ended the run through the SIGINT handler (a run
// that fails before the stage, or a stage line that no longer appears, fails the case instead
// of passing or running on). Only the persistent cluster outlives it, by design, until
// `npm run cluster -- down`, which the test runs last. On a fresh cluster and again on the
// cluster it left, every sample reads at every served version (the conversion key's Secret
// is there as on an install) and the console shows no warning in its first minute. Once up, the README's demo walkthrough
// (the sh block after `npm start`) runs as typed against it: the target is healthy before the
// breach (every Deployment Ready on the kwok nodes, which stay Ready past the node lifecycle
// controller's grace period), and the operator started clean (no watch failure: it waited for
// the CRD it started before); and `kubectl aiops simulate` replays web-load's recorded metric
// with no Prometheus flag: the block's `eval "$(npm run -s cluster -- env)"` exported
// AIOPS_PROMETHEUS_URL, npm start's Prometheus on loopback, which `env` prints no more once
// npm start has stopped. The demo StatefulSets scale to their bounds and no further: cache up
// to its maxReplicas under the walkthrough's load, the idle batch down to its minReplicas (the
// walkthrough waits for it as typed). The walkthrough and the waits live in ./support.ts.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { VERSIONS } from '../../api/crd.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { pidsMentioning } from '../harness/real-node/host-state.ts';
import {
  type AtBound,
  demoWalkthrough,
  describeLeft,
  kubectlJson,
  NODE_GRACE_MS,
  scaledToItsBound,
  sessionEmpties,
  type Walkthrough,
} from './support.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const clusterDir = join(mkdtempSync(join(tmpdir(), 'aiops-start-test-')), 'cluster');
/** The TMPDIR of each npm start run, removed at the end. */
const runTmps: string[] = [];
const execAsync = promisify(execFile);

interface Run {
  readonly code: number | null;
  /** The signal npm ended with: on Ctrl-C npm re-raises SIGINT after its script exits. */
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly stdout: string;
  readonly sid: number;
  /** What the run's own TMPDIR holds of the project's temp dirs (aiops-*) at the time of the call. */
  readonly leftInTmp: () => string[];
  /** Whether `interruptOn` matched (and so SIGINT was sent because of it). */
  readonly interrupted: boolean;
}

/** The line npm start prints once every stage is done and it only waits for Ctrl-C. */
const READY = /\[aiops\] Ctrl-C stops/;
/** The line npm start's SIGINT handler prints first. */
const STOPPING = '[aiops] SIGINT: stopping what npm start started';

/**
 * Runs `npm start` in a session of its own; when `interruptOn` matches a stderr line, sends
 * SIGINT to its process group (what Ctrl-C does). If npm start gets ready without
 * `interruptOn` matching, SIGINT is sent all the same (so a stage line that no longer appears
 * fails the test instead of leaving npm start running) and `interrupted` is false. Resolves
 * when npm has exited.
 */
async function npmStart(opts: {
  interruptOn?: RegExp;
  env?: Record<string, string>;
  /** Run once npm start is ready, before the SIGINT; what it throws fails the run. */
  whenReady?: (demoPort: number) => Promise<void>;
}): Promise<Run> {
  const [demoPort = 0] = await freePorts(1);
  const tmp = mkdtempSync(join(tmpdir(), 'aiops-start-tmp-'));
  runTmps.push(tmp);
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      AIOPS_CLUSTER_DIR: clusterDir,
      AIOPS_DEMO_PORT: String(demoPort),
      TMPDIR: tmp,
      ...opts.env,
    },
  });
  const pid = child.pid ?? 0;
  let stderr = '';
  let stdout = '';
  let sent = false;
  let interrupted = false;
  let readyFailed: Error | undefined;
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (!sent && opts.interruptOn?.test(stderr)) {
      sent = true;
      interrupted = true;
      const { whenReady } = opts;
      if (whenReady === undefined) process.kill(-pid, 'SIGINT');
      else
        void whenReady(demoPort)
          .catch((err: unknown) => (readyFailed = err instanceof Error ? err : new Error(String(err))))
          .finally(() => process.kill(-pid, 'SIGINT'));
    } else if (!sent && opts.interruptOn && READY.test(stderr)) {
      sent = true;
      process.kill(-pid, 'SIGINT');
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  if (readyFailed !== undefined) throw readyFailed;
  const leftInTmp = (): string[] => readdirSync(tmp).filter((f) => f.startsWith('aiops-'));
  return { code, signal, stderr, stdout, sid: pid, leftInTmp, interrupted };
}

/**
 * Asserts that `run` was ended by its Ctrl-C during `stage`: the trigger matched, the SIGINT
 * handler stopped it (exit 130 or npm re-raising SIGINT) before it got ready and before any
 * failure of its own, and the last stage npm start announced before the SIGINT was `stage`
 * — or, as a stage that takes no time may already have handed over, the one right after it.
 */
function assertInterruptedAt(run: Run, stage: string, within: readonly string[]): void {
  assert.ok(run.interrupted, `the Ctrl-C trigger of stage ${stage} never appeared:\n${run.stderr}`);
  assert.ok(
    run.code === 130 || run.signal === 'SIGINT',
    `ended by Ctrl-C: ${String(run.code)} ${String(run.signal)}\n${run.stderr}`,
  );
  const stop = run.stderr.indexOf(STOPPING);
  assert.ok(stop >= 0, `the SIGINT handler stopped it:\n${run.stderr}`);
  const before = run.stderr.slice(0, stop);
  const last = [...before.matchAll(/\[aiops\] stage (\w+):/g)].at(-1)?.[1];
  assert.ok(
    last !== undefined && within.includes(last),
    `interrupted during stage ${String(last)}, expected ${within.join(' or ')}:\n${run.stderr}`,
  );
  assert.doesNotMatch(before, READY, 'interrupted before npm start was ready');
  assert.doesNotMatch(before, /\[aiops\] failed:/, 'no failure of its own before the Ctrl-C');
}

/** How long after its start npm start's console must stay free of warnings: a minute. */
const QUIET_MS = 60_000;

/** The AITask samples in config/samples/: name and the version each is written at. */
const SAMPLES = readdirSync(join(root, 'config/samples'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => loadAll(readFileSync(join(root, 'config/samples', f), 'utf8')))
  .filter(
    (d): d is { kind: string; metadata: { name: string } } => (d as { kind?: unknown }).kind === 'AITask',
  )
  .map((d) => d.metadata.name)
  .sort();

/** Every version the CRD serves (npm start installs buildCRD's default: all of them). */
const SERVED = VERSIONS;

/** `<version> <name>` for every served version and sample, as readEverySampleAtEveryVersion returns them. */
const expectedReads = (): string[] => SERVED.flatMap((v) => SAMPLES.map((n) => `${v} ${n}`)).sort();

/**
 * Reads each sample by name at each served version with kubectl (through the conversion
 * webhook for every version but storage's), waiting for the sample to exist, and returns
 * `<version> <name>` of each read whose object came back at that version; a read that fails
 * throws with kubectl's error.
 */
async function readEverySampleAtEveryVersion(): Promise<string[]> {
  const got: string[] = [];
  for (const version of SERVED)
    for (const name of SAMPLES) {
      const o = await kubectlJson<{ apiVersion: string; metadata: { name: string } }>(
        clusterDir,
        'get',
        `aitasks.${version}.aiops.example.com`,
        name,
        '-n',
        'demo',
      );
      if (o.apiVersion === `aiops.example.com/${version}`) got.push(`${version} ${o.metadata.name}`);
    }
  return got.sort();
}

/**
 * The lines of a console that warn: a log line at warn or error (zap's JSON `level` or its
 * console encoding's level column), a kubectl or Node warning, or npm start's own failure line.
 */
function warningLines(console: string): string[] {
  return console
    .split('\n')
    .filter((l) =>
      /"level":"(warn|error)"|\t(WARN|ERROR)\t|^Warning:|\(node:\d+\) \w*Warning|\[aiops\] failed/.test(l),
    );
}

/** What `npm run -s cluster -- env` prints for the test's cluster. */
async function clusterEnv(): Promise<string> {
  const env = { ...process.env, AIOPS_CLUSTER_DIR: clusterDir };
  return (await execAsync('npm', ['run', '-s', 'cluster', '--', 'env'], { cwd: root, env })).stdout;
}

describe('npm start', { concurrency: false }, () => {
  after(() => {
    execFileSync('npm', ['run', '--silent', 'cluster', '--', 'down'], {
      cwd: root,
      env: { ...process.env, AIOPS_CLUSTER_DIR: clusterDir },
      stdio: 'ignore',
    });
    assert.deepEqual(pidsMentioning(clusterDir), [], 'cluster down leaves no process');
    rmSync(dirname(clusterDir), { recursive: true, force: true });
    for (const tmp of runTmps) rmSync(tmp, { recursive: true, force: true });
  });

  it('Ctrl-C while the cluster starts stops the half-started cluster too', async () => {
    const run = await npmStart({ interruptOn: /started kube-apiserver/ });
    assertInterruptedAt(run, 'cluster', ['cluster']);
    assert.deepEqual(await sessionEmpties(run.sid), []);
    const left = pidsMentioning(clusterDir);
    assert.deepEqual(left, [], `left running:\n${describeLeft(left)}`);
    assert.equal(existsSync(join(clusterDir, 'state.json')), false);
  });

  for (const which of ['on a fresh cluster', 'again on the cluster the first run left']) {
    it(`${which}: every sample reads at every served version and the console shows no warning in the first minute`, async () => {
      assert.equal(
        existsSync(join(clusterDir, 'state.json')),
        which.startsWith('again'),
        'the first run starts the cluster, the second reuses it',
      );
      const startedAt = Date.now();
      let reads: string[] = [];
      const run = await npmStart({
        interruptOn: READY,
        whenReady: async () => {
          reads = await readEverySampleAtEveryVersion();
          const quietUntil = startedAt + QUIET_MS;
          if (Date.now() < quietUntil) await new Promise((r) => setTimeout(r, quietUntil - Date.now()));
          // The last run deletes the samples while its operator can still lift their finalizers,
          // so the cases after it find no AITask that nothing would ever finalize.
          if (which.startsWith('again'))
            await execAsync('kubectl', [
              `--kubeconfig=${join(clusterDir, 'kubeconfig')}`,
              'delete',
              'aitasks',
              '--all',
              '-n',
              'demo',
              '--wait',
              '--timeout=180s',
            ]);
        },
      });
      assert.ok(
        run.code === 130 || run.signal === 'SIGINT',
        `came up and ended by Ctrl-C: ${String(run.code)} ${String(run.signal)}\n${run.stderr}`,
      );
      assert.deepEqual(reads, expectedReads(), 'each sample read back by name at each served version');
      const warnings = warningLines(`${run.stdout}\n${run.stderr.slice(0, run.stderr.indexOf(STOPPING))}`);
      assert.deepEqual(warnings, [], 'no warning or error on the console before the Ctrl-C');
      assert.deepEqual(await sessionEmpties(run.sid), []);
    });
  }

  it('a missing Prometheus fails in one line with the fix, and stops what it started', async () => {
    const run = await npmStart({ env: { AIOPS_PROMETHEUS_BIN: '/nonexistent/prometheus' } });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /\[aiops\] failed: AIOPS_PROMETHEUS_BIN=\/nonexistent\/prometheus is not an executable/,
    );
    assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
    assert.deepEqual(await sessionEmpties(run.sid), []);
  });

  const stages = ['exporter', 'prometheus', 'operator', 'crd', 'samples'];
  for (const [i, stage] of stages.entries()) {
    it(`Ctrl-C at stage ${stage} leaves no process of its own`, async () => {
      const run = await npmStart({ interruptOn: new RegExp(`\\[aiops\\] stage ${stage}:`) });
      assertInterruptedAt(run, stage, stages.slice(i, i + 2));
      const left = await sessionEmpties(run.sid);
      assert.deepEqual(left, [], `left running:\n${describeLeft(left)}`);
      assert.deepEqual(run.leftInTmp(), [], 'no temp dir of its own left in TMPDIR');
    });
  }

  it('comes up, the operator reconciles the samples, the README walkthrough shows a healthy demo, and Ctrl-C stops it cleanly', async () => {
    // As on a newcomer's first run, the operator starts before the CRD exists (the cases
    // above installed it): it must wait for it quietly.
    await execAsync('kubectl', [
      `--kubeconfig=${join(clusterDir, 'kubeconfig')}`,
      'delete',
      'crd',
      'aitasks.aiops.example.com',
      '--ignore-not-found',
      '--wait',
    ]);
    let walk: Walkthrough | undefined;
    let bounds: { cache: AtBound; batch: AtBound } | undefined;
    let envWhileUp = '';
    const run = await npmStart({
      interruptOn: /\[aiops\] Ctrl-C stops/,
      whenReady: async (demoPort) => {
        walk = await demoWalkthrough(root, clusterDir, demoPort);
        const [cache, batch] = await Promise.all([
          scaledToItsBound(clusterDir, 'cache-load', 'cache', 'AtMaxReplicas'),
          scaledToItsBound(clusterDir, 'batch-idle', 'batch', 'AtMinReplicas'),
        ]);
        bounds = { cache, batch };
        envWhileUp = await clusterEnv();
      },
    });
    assert.ok(walk, 'the walkthrough ran');
    // The operator started before the CRD existed and waited for it quietly.
    assert.doesNotMatch(
      `${run.stdout}\n${run.stderr}`,
      /watch failed/,
      'no watch failure in the operator output',
    );
    // Healthy before the breach: every demo Deployment Ready, on nodes past the grace period.
    assert.ok(walk.nodesAgeMs >= NODE_GRACE_MS, `nodes ${walk.nodesAgeMs} ms old`);
    assert.equal(walk.nodeNotReady, 0, 'no kwok node went NotReady');
    assert.deepEqual(walk.deployments.sort(), ['api 2/2', 'web 2/2', 'worker 2/2']);
    // The walkthrough's breach scaled StatefulSet cache up to its maxReplicas and no further;
    // batch-idle scaled the idle StatefulSet batch down to its minReplicas and no further.
    assert.deepEqual(bounds, {
      cache: { replicas: 3, blockedBy: 'AtMaxReplicas' },
      batch: { replicas: 1, blockedBy: 'AtMinReplicas' },
    });
    assert.match(
      walk.output,
      /^statefulset\.apps\/batch condition met$/m,
      'the walkthrough waited for batch',
    );
    assert.match(walk.output, /^demo\s+web-load\s/m, 'kubectl get at -A lists web-load');
    const health = /^Target Health:.*$/m.exec(walk.output)?.[0] ?? '';
    assert.match(
      health,
      /Deployment demo\/web: 2\/2 ready, 2 updated, 2 available; .*Available=True/,
      walk.output,
    );
    assert.doesNotMatch(health, /=False/);
    assert.match(walk.output, /demo_load\{deployment="web"\} = 0\.95/, 'the curl moved the metric');
    assert.match(walk.output, /aitask "web-load" in namespace "demo" is /, 'explain-phase explains web-load');
    // simulate, with no flag, read the metric from the Prometheus `cluster env` exported.
    assert.match(envWhileUp, /^export AIOPS_PROMETHEUS_URL=http:\/\/127\.0\.0\.1:\d+$/m, envWhileUp);
    assert.doesNotMatch(await clusterEnv(), /AIOPS_PROMETHEUS_URL/, 'not once npm start stopped');
    const replayed = /^AITask demo\/web-load replayed over .* \(.*, (\d+) samples? every 15s\)$/m.exec(
      walk.output,
    );
    assert.ok(Number(replayed?.[1]) > 0, `simulate replayed samples of web-load:\n${walk.output}`);
    assert.match(walk.output, /^Query: +max\(demo_load\{.*namespace="demo".*\}\)$/m, 'the confined query');
    assert.match(walk.output, /^Would do: +(no action|\d+ ScaleUp .*)$/m, "simulate's summary");
    assert.match(run.stdout, /aitask\.aiops\.example\.com\/\S+ (created|unchanged|configured)/, run.stderr);
    assert.match(run.stdout, /NAME\s+TARGET/);
    assert.doesNotMatch(run.stderr, /conversion webhook.*connection refused/);
    const kubeconfig = join(clusterDir, 'kubeconfig');
    const list = JSON.parse(
      execFileSync(
        'kubectl',
        [`--kubeconfig=${kubeconfig}`, 'get', 'aitasks.v2.aiops.example.com', '-n', 'demo', '-o', 'json'],
        {
          encoding: 'utf8',
        },
      ),
    ) as { items: { metadata: { name: string }; status?: { phase?: string } }[] };
    assert.ok(list.items.length >= 3, 'the samples of every version exist');
    for (const item of list.items)
      assert.ok(item.status?.phase, `the operator wrote a phase on ${item.metadata.name}`);
    assert.ok(
      run.code === 130 || run.signal === 'SIGINT',
      `ended by Ctrl-C: ${String(run.code)} ${String(run.signal)}`,
    );
    assert.match(run.stderr, /SIGINT: stopping what npm start started/);
    assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
    const left = await sessionEmpties(run.sid);
    assert.deepEqual(left, [], `left running:\n${describeLeft(left)}`);
    assert.deepEqual(run.leftInTmp(), [], 'no temp dir of its own left in TMPDIR');
  });
});
