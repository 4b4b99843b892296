// Starting and stopping one control-plane process, in two modes: "owned" (a child of this
// Node process, killed when it exits; used by tests) and "detached" (own session, survives
// the CLI; stopped later by pid from the state file). Output always goes to a log file, so
// both modes behave the same and a failed start can show the log tail.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** What to run. `name` also names the log file `<logDir>/<name>.log`. */
export interface ComponentSpec {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  /** Network namespace handle (e.g. /run/netns/x) to run in, through `nsenter --net`; default: the host's. */
  readonly netns?: string;
  /** Extra environment variables (added to this process's). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The serialisable part of a running component (kept in the CLI state file). */
export interface ComponentRecord {
  readonly name: string;
  readonly pid: number;
  readonly binary: string;
  readonly logPath: string;
}

/** A started component, owned or attached by pid. */
export interface Component extends ComponentRecord {
  /** `undefined` while the process runs; otherwise how it ended (e.g. "exit code 1"). */
  exitStatus(): string | undefined;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5000 ms); resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const owned = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every still-running owned child when this Node process exits (crash, test timeout). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of owned)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

/**
 * Spawns `spec.binary` with stdout+stderr appended to `<logDir>/<name>.log`. With `detached`,
 * the process gets its own session and is unref'd so this process may exit; otherwise it is
 * killed (SIGKILL) when this process exits. Throws at once if the binary is not executable.
 */
export function spawnComponent(spec: ComponentSpec, logDir: string, detached: boolean): Component {
  accessSync(spec.binary, constants.X_OK);
  const logPath = join(logDir, `${spec.name}.log`);
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    // nsenter execs the binary, so the process keeps its pid and argv[0] is spec.binary.
    const options = {
      stdio: ['ignore', fd, fd] as ['ignore', number, number],
      detached,
      env: { ...process.env, ...spec.env },
    };
    child =
      spec.netns === undefined
        ? spawn(spec.binary, spec.args, options)
        : spawn('nsenter', [`--net=${spec.netns}`, '--', spec.binary, ...spec.args], options);
  } finally {
    closeSync(fd);
  }
  let status: string | undefined;
  child.on('error', (err) => (status ??= `spawn error: ${err.message}`));
  const exited = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      status = signal === null ? `exit code ${String(code)}` : `killed by ${signal}`;
      owned.delete(child);
      resolve();
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${spec.name}: spawn of ${spec.binary} failed`);
  if (detached) child.unref();
  else {
    owned.add(child);
    installExitHook();
  }
  return {
    name: spec.name,
    pid,
    binary: spec.binary,
    logPath,
    exitStatus: () => status,
    async stop(graceMs = 5000) {
      if (status !== undefined) return;
      child.kill('SIGTERM');
      const abort = new AbortController();
      const timer = sleep(graceMs, 'timeout' as const, { signal: abort.signal }).catch(
        () => 'aborted' as const,
      );
      if ((await Promise.race([exited, timer])) === 'timeout') child.kill('SIGKILL');
      abort.abort();
      await exited;
    },
  };
}

/**
 * True if `pid` runs `binary` (argv[0] from /proc/<pid>/cmdline) and is not a zombie. Checking
 * argv[0] keeps a recycled pid from being mistaken for (and killed as) a harness process.
 */
export function isRunning(pid: number, binary: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === binary;
  } catch {
    return false;
  }
}

async function waitGone(rec: ComponentRecord, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isRunning(rec.pid, rec.binary)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/**
 * A component known only by its record (started detached by an earlier process). `stop`
 * polls /proc every 50 ms: SIGTERM, SIGKILL after `graceMs` (default 5000 ms), then throws if
 * the pid still runs 5 s later.
 */
export function attachComponent(rec: ComponentRecord): Component {
  return {
    ...rec,
    exitStatus: () => (isRunning(rec.pid, rec.binary) ? undefined : 'not running'),
    async stop(graceMs = 5000) {
      if (!isRunning(rec.pid, rec.binary)) return;
      signal(rec.pid, 'SIGTERM');
      if (await waitGone(rec, graceMs)) return;
      signal(rec.pid, 'SIGKILL');
      if (!(await waitGone(rec, 5000)))
        throw new Error(`${rec.name} (pid ${rec.pid}) did not exit after SIGKILL`);
    },
  };
}

/** The last `lines` lines (default 30) of a log file, or a note if it cannot be read. */
export async function logTail(path: string, lines = 30): Promise<string> {
  try {
    const text = await readFile(path, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(cannot read ${path}: ${String(err)})`;
  }
}
