// A memory cgroup of a test's own, so a child process runs under a container's memory limit as
// it does in a pod: Node sizes its V8 heap from the cgroup (process.constrainedMemory) instead
// of a flag, and the kernel itself OOM-kills the process past the limit instead of a test
// comparing resident memory afterwards. cgroup v2 (the unified hierarchy with the memory
// controller) and v1 (the memory hierarchy) are both handled; a machine where neither can be
// made fails the test saying why, never skips it. Tests run as root, as CI does.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../harness/wait.ts';

/** Where the cgroup file systems are mounted. */
const CGROUP_ROOT = '/sys/fs/cgroup';

/** Where a memory cgroup of this machine is made, and under which hierarchy. */
export interface CgroupLayout {
  readonly version: 1 | 2;
  /** The directory the test's cgroup is made in. */
  readonly parent: string;
}

/** What the machine says about its cgroups, as memoryCgroupLayout reads it. */
export interface CgroupFacts {
  /** The text of /sys/fs/cgroup/cgroup.controllers; undefined when there is none (no v2 root there). */
  readonly v2Controllers: string | undefined;
  /** Whether the v1 memory hierarchy is mounted at /sys/fs/cgroup/memory. */
  readonly v1Memory: boolean;
  /** The text of /proc/self/cgroup. */
  readonly selfCgroup: string;
}

/**
 * Where to make a memory cgroup: under the v2 root when its controllers list `memory`, else in
 * the v1 memory hierarchy beside this process, as a child of its own memory cgroup (so a limit
 * this process is under still applies); a string saying why not when neither is there.
 */
export function memoryCgroupLayout(facts: CgroupFacts): CgroupLayout | string {
  if (facts.v2Controllers?.split(/\s+/).includes('memory') === true)
    return { version: 2, parent: CGROUP_ROOT };
  if (facts.v1Memory) {
    const own = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(\/.*)$/m.exec(facts.selfCgroup)?.[1];
    if (own === undefined) return '/proc/self/cgroup names no memory cgroup of this process';
    return { version: 1, parent: join(CGROUP_ROOT, 'memory', own) };
  }
  return `neither cgroup v2 with the memory controller (${CGROUP_ROOT}/cgroup.controllers) nor the v1 memory hierarchy (${CGROUP_ROOT}/memory) is mounted`;
}

/**
 * The files written, in order, to limit a cgroup of `layout` to `limitBytes` of memory with no
 * swap beyond it; `present` says which optional file the kernel provides (swap accounting).
 * v2: memory.max, then memory.swap.max 0. v1: memory.limit_in_bytes, then
 * memory.memsw.limit_in_bytes (memory and swap together) to the same value, which v1 only
 * takes once memory.limit_in_bytes is not above it.
 */
export function limitWrites(
  version: 1 | 2,
  limitBytes: number,
  present: (file: string) => boolean,
): [file: string, value: string][] {
  const writes: [string, string][] =
    version === 2
      ? [
          ['memory.max', String(limitBytes)],
          ['memory.swap.max', '0'],
        ]
      : [
          ['memory.limit_in_bytes', String(limitBytes)],
          ['memory.memsw.limit_in_bytes', String(limitBytes)],
        ];
  return writes.filter(([file], i) => i === 0 || present(file));
}

/** The `oom_kill` count of a v2 memory.events or a v1 memory.oom_control text (0 when absent). */
export function oomKills(text: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}

/** A memory cgroup made by createMemoryCgroup. */
export interface MemoryCgroup {
  /** Its directory. */
  readonly path: string;
  /** Its limit in MiB (swap included where the kernel accounts swap). */
  readonly limitMiB: number;
  /**
   * The command and arguments that run `command args` in this cgroup from its first
   * instruction: `sh` writes its own pid to cgroup.procs, then execs the command (same pid).
   */
  wrap(command: string, args: readonly string[]): [command: string, args: string[]];
  /** The processes in it the kernel OOM-killed so far. */
  oomKills(): number;
  /**
   * Removes its directory once no process is in it (waits up to 10 s for the kernel to
   * drop exited ones, then throws). Call after every process started in it exited.
   */
  remove(): Promise<void>;
}

const read = (path: string): string | undefined =>
  existsSync(path) ? readFileSync(path, 'utf8') : undefined;

/**
 * Makes a uniquely named memory cgroup (`aiops-test-<pid>-<random>`) limited to `limitMiB`
 * MiB, swap included. Throws saying why when none can be made (no memory controller, not root).
 */
export function createMemoryCgroup(limitMiB: number): MemoryCgroup {
  const layout = memoryCgroupLayout({
    v2Controllers: read(join(CGROUP_ROOT, 'cgroup.controllers')),
    v1Memory: existsSync(join(CGROUP_ROOT, 'memory', 'memory.limit_in_bytes')),
    selfCgroup: read('/proc/self/cgroup') ?? '',
  });
  const fail = (why: string): never => {
    throw new Error(
      `cannot run a process under a ${limitMiB} MiB memory cgroup: ${why} (the attack suites need one, as root)`,
    );
  };
  if (typeof layout === 'string') return fail(layout);
  const path = join(layout.parent, `aiops-test-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    if (layout.version === 2) {
      const control = join(layout.parent, 'cgroup.subtree_control');
      if (!(read(control) ?? '').split(/\s+/).includes('memory')) writeFileSync(control, '+memory');
    }
    mkdirSync(path);
  } catch (err) {
    return fail(`making ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    for (const [file, value] of limitWrites(layout.version, limitMiB * 2 ** 20, (f) =>
      existsSync(join(path, f)),
    ))
      writeFileSync(join(path, file), value);
  } catch (err) {
    rmdirSync(path);
    return fail(`limiting ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const events = join(path, layout.version === 2 ? 'memory.events' : 'memory.oom_control');
  return {
    path,
    limitMiB,
    wrap: (command, args) => [
      '/bin/sh',
      ['-c', 'echo $$ > "$0" && exec "$@"', join(path, 'cgroup.procs'), command, ...args],
    ],
    oomKills: () => oomKills(read(events) ?? ''),
    async remove() {
      if (!existsSync(path)) return;
      await waitFor(
        `the processes of ${path} to be gone`,
        () => ((read(join(path, 'cgroup.procs')) ?? '').trim() === '' ? true : undefined),
        { deadline: Date.now() + 10_000, watch: [] },
      );
      rmdirSync(path);
    },
  };
}

/**
 * The V8 heap limit (`v8.getHeapStatistics().heap_size_limit`, bytes) Node gives itself when
 * run with `nodeArgs` under a memory cgroup of `limitMiB` MiB: a `node -p` of its own in a
 * cgroup of its own, removed afterwards. Throws when no cgroup can be made or Node fails.
 */
export async function heapLimitUnder(limitMiB: number, nodeArgs: readonly string[]): Promise<number> {
  const cgroup = createMemoryCgroup(limitMiB);
  try {
    const [command, args] = cgroup.wrap(process.execPath, [
      ...nodeArgs,
      '-p',
      'require("node:v8").getHeapStatistics().heap_size_limit',
    ]);
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    const bytes = Number(out.trim());
    if (code !== 0 || !Number.isFinite(bytes) || bytes <= 0)
      throw new Error(`node ${nodeArgs.join(' ')} under ${cgroup.path} exited ${code} printing ${out}`);
    return bytes;
  } finally {
    await cgroup.remove();
  }
}
