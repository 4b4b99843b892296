// `npm test -- --busy`: the suites beside a process spinning on every core, as on a shared CI
// runner or a contributor's laptop, so a test that passes only on an idle machine fails here
// instead of there.

import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * A spinning loop that checks, every ~64M turns (a fraction of a second), that its parent is
 * still the one that started it, and exits once orphaned: a runner killed with SIGKILL, which
 * cannot stop its hogs, leaves none spinning. The parent is read from /proc/self/stat (Node's
 * process.ppid is fixed at startup); without /proc, the parent's pid is probed with signal 0.
 * The parent's pid comes as the argument: a parent gone before the hog starts is noticed too.
 */
const SPIN = `
const { readFileSync } = require('node:fs');
const first = Number(process.argv[1]);
const parent = () => {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    try { process.kill(first, 0); return first; } catch { return 0; }
  }
};
for (let i = 1; ; i++) if ((i & 0x3ffffff) === 0 && parent() !== first) process.exit(0);
`;

/** Processes spinning on the machine's cores. */
export interface CpuHog {
  /** Their pids. */
  readonly pids: readonly number[];
  /** SIGKILLs each and resolves once every one has exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `n` (default: os.availableParallelism()) processes of `node` each spinning one core at
 * the default priority. They are not detached: an interrupt of the terminal reaches them too.
 */
export function startCpuHog(n = availableParallelism(), node = process.execPath): CpuHog {
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    spawn(node, ['-e', SPIN, String(process.pid)], { stdio: 'ignore' }),
  );
  const exited = children.map(
    (c) =>
      new Promise<void>((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) resolve();
        c.once('exit', () => resolve());
        c.once('error', () => resolve());
      }),
  );
  return {
    pids: children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
    stop: async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(exited);
    },
  };
}
