// `npm test` interrupted, as a CI timeout or Ctrl-C does it, for the tests that check what it
// leaves behind (harness/npm-test-interrupt.cluster.test.ts, real-node/interrupt.cluster.test.ts): a run of
// held-cluster.fixture.ts with a TMPDIR of its own, so every process the run started names it
// in its command line, sent SIGTERM once the test file's cluster is up.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pidsMentioning } from './real-node/host-state.ts';
import { eventually } from './wait.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** What an interrupted run left. */
export interface Interrupted {
  /** Processes naming the run's TMPDIR while the test file held its cluster. */
  readonly runningBefore: number;
  /** The runner's exit code. */
  readonly code: number | null;
  /** Processes still naming the run's TMPDIR after the runner exited. */
  readonly left: readonly number[];
  /** Whether the test file's own process still runs. */
  readonly testFileAlive: boolean;
  /** The end of the runner's stderr. */
  readonly stderr: string;
}

/**
 * Runs `npm test -- test/harness/held-cluster.fixture.ts` (its cluster with a real node when
 * `realNode`), SIGTERMs it once the cluster is up (waiting up to `readyMs`, default 180 s)
 * and reports what is left; whatever is left is then SIGKILLed and the TMPDIR removed.
 */
export async function interruptedRun(
  opts: { readonly realNode?: boolean; readonly readyMs?: number } = {},
): Promise<Interrupted> {
  const tmp = mkdtempSync(join(tmpdir(), 'aiops-interrupt-'));
  const ready = join(tmp, 'ready');
  // Without NODE_TEST_CONTEXT: node:test, finding it set, takes the nested run for a
  // recursive call from inside a test file and runs no file at all.
  const outer = { ...process.env };
  delete outer['NODE_TEST_CONTEXT'];
  const run = spawn(process.execPath, ['scripts/test.ts', 'test/harness/held-cluster.fixture.ts'], {
    cwd: root,
    env: {
      ...outer,
      TMPDIR: tmp,
      AIOPS_HELD_READY: ready,
      ...(opts.realNode === true ? { AIOPS_HELD_REAL_NODE: '1' } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  run.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<number | null>((r) => run.once('exit', (code) => r(code)));
  try {
    await eventually(
      "the test file's cluster",
      () => (existsSync(ready) ? true : undefined),
      opts.readyMs ?? 180_000,
    );
    const runningBefore = pidsMentioning(tmp).length;
    run.kill('SIGTERM');
    const code = await exited;
    const testFile = Number(readFileSync(ready, 'utf8'));
    return {
      runningBefore,
      code,
      left: pidsMentioning(tmp),
      testFileAlive: existsSync(`/proc/${testFile}`),
      stderr,
    };
  } catch (err) {
    throw new Error(`${(err as Error).message}; the runner's stderr:\n${stderr}`, { cause: err });
  } finally {
    if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL');
    for (const pid of pidsMentioning(tmp)) process.kill(pid, 'SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }
}
