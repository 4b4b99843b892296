// `npm start` as a newcomer types it, on a cluster of its own (AIOPS_CLUSTER_DIR in a temp
// dir): it comes up and the operator reconciles the samples; a missing Prometheus fails in
// one line; and Ctrl-C (SIGINT to the whole process group, as a terminal sends it) at every
// stage leaves no process and no temp dir of its own behind; each such case checks that its
// Ctrl-C came during the stage it names and ended the run through the SIGINT handler (a run
// that fails before the stage, or a stage line that no longer appears, fails the case instead
// of passing or running on). Only the persistent cluster outlives it, by design, until
// `npm run cluster -- down`, which the test runs last.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../scripts/lib/ports.ts';
import { pidsMentioning } from '../harness/real-node/host-state.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const clusterDir = join(mkdtempSync(join(tmpdir(), 'aiops-start-test-')), 'cluster');
/** The TMPDIR of each npm start run, removed at the end. */
const runTmps: string[] = [];

/** Pids of live processes whose session id is `sid` (field 6 of /proc/<pid>/stat). */
function sessionMembers(sid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[3]) === sid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}

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
async function npmStart(opts: { interruptOn?: RegExp; env?: Record<string, string> }): Promise<Run> {
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
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (!sent && opts.interruptOn?.test(stderr)) {
      sent = true;
      interrupted = true;
      process.kill(-pid, 'SIGINT');
    } else if (!sent && opts.interruptOn && READY.test(stderr)) {
      sent = true;
      process.kill(-pid, 'SIGINT');
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
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

/** Waits up to 15 s for the session to empty (children finish their shutdown). */
async function sessionEmpties(sid: number): Promise<number[]> {
  const deadline = Date.now() + 15_000;
  let left = sessionMembers(sid);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = sessionMembers(sid);
  }
  return left;
}

const describeLeft = (pids: number[]): string =>
  pids.map((p) => `${p}: ${readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ')}`).join('\n');

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

  it('comes up, the operator reconciles the samples, and Ctrl-C stops it cleanly', async () => {
    const run = await npmStart({ interruptOn: /\[aiops\] Ctrl-C stops/ });
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
