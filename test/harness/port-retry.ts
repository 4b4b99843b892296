// Starting a control-plane component on TCP ports the harness has to choose for it. etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok take their ports on the
// command line and none can bind port 0 and report it (there 0 means "do not serve", or the
// URL a component advertises would be wrong), so the harness picks free ports
// (scripts/lib/ports.ts) and another process may take one between that choice and the bind.
// Each of the five then exits with "bind: address already in use" (kwok's server included);
// this module starts it again on newly chosen ports, a bounded number of times, and counts a
// component ready only once its own process listens on its ports, so a stranger answering on
// a lost port is never taken for it.

import { existsSync, statSync } from 'node:fs';
import { open, readdir, readFile, readlink } from 'node:fs/promises';
import type { Component } from './process.ts';

/** Attempts at starting one component, each on newly chosen ports (so 4 retries). */
export const PORT_ATTEMPTS = 5;

/** What etcd, the Kubernetes components and kwok log when a port they bind is taken (Go's net error). */
export const PORT_TAKEN = /address already in use/;

/**
 * Whether a failed start is retried on new ports: only when the component exited, its log
 * since this attempt began says a port was taken, and attempts are left.
 */
export function retryOnNewPorts(failed: {
  readonly exited: boolean;
  readonly logSinceStart: string;
  readonly attempt: number;
  readonly attempts: number;
}): boolean {
  return failed.exited && PORT_TAKEN.test(failed.logSinceStart) && failed.attempt < failed.attempts;
}

/** Inodes of the TCP sockets in LISTEN state on local `port`, from /proc/net/tcp and tcp6. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${hexPort}`) === true && f[3] === '0A' && f[9] !== undefined) inodes.add(f[9]);
    }
  }
  return inodes;
}

/**
 * True when process `pid` holds a TCP socket listening on every one of `ports` (Linux /proc,
 * the process run by this user); false while it does not yet, or when it is gone.
 */
export async function listensOn(pid: number, ports: readonly number[]): Promise<boolean> {
  const wanted = await Promise.all(ports.map(listeningInodes));
  if (wanted.some((s) => s.size === 0)) return false;
  const held = new Set<string>();
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m?.[1] !== undefined) held.add(m[1]);
  }
  return wanted.every((inodes) => [...inodes].some((i) => held.has(i)));
}

/** The text appended to `path` since it was `offset` bytes long ('' when there is none). */
async function readFrom(path: string, offset: number): Promise<string> {
  const file = await open(path, 'r').catch(() => undefined);
  if (file === undefined) return '';
  try {
    const { size } = await file.stat();
    const buf = Buffer.alloc(Math.max(0, size - offset));
    await file.read(buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    await file.close();
  }
}

/** One component's start on ports the harness chooses. */
export interface PortBoundStart {
  /** The component's name, for progress lines. */
  readonly name: string;
  /** How many ports it needs. */
  readonly count: number;
  /** Its log file (appended by every attempt): what it says since an attempt began decides a retry. */
  readonly logPath: string;
  /** Chooses `count` free ports (scripts/lib/ports.ts freePorts, or what a test injects). */
  readonly choose: (count: number) => Promise<number[]>;
  /** Spawns the component on `ports`. */
  readonly spawn: (ports: readonly number[]) => Component;
  /**
   * Resolves once the component on `ports` is ready; rejects as soon as it exits (a harness
   * waitFor watching it) or at the deadline.
   */
  readonly ready: (ports: readonly number[], component: Component) => Promise<void>;
  /** Drops a component that exited on a taken port (from the processes the harness watches and stops). */
  readonly forget: (component: Component) => void;
  /** Attempts (default PORT_ATTEMPTS). */
  readonly attempts?: number;
  /** Progress lines (default none). */
  readonly log?: (line: string) => void;
}

/**
 * Starts a component on ports from `choose` and waits until it is ready; when it exits
 * because one of its ports was taken meanwhile (retryOnNewPorts), starts it again on newly
 * chosen ports, up to `attempts` in all. Any other failure, and the last attempt's, is
 * rethrown as it came. Returns the ports it listens on and the running component.
 */
export async function startOnFreePorts(
  o: PortBoundStart,
): Promise<{ ports: number[]; component: Component }> {
  const attempts = o.attempts ?? PORT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const ports = await o.choose(o.count);
    const offset = existsSync(o.logPath) ? statSync(o.logPath).size : 0;
    const component = o.spawn(ports);
    try {
      await o.ready(ports, component);
      return { ports, component };
    } catch (err) {
      const exited = component.exitStatus() !== undefined;
      const logSinceStart = exited ? await readFrom(o.logPath, offset) : '';
      if (!retryOnNewPorts({ exited, logSinceStart, attempt, attempts })) throw err;
      o.forget(component);
      o.log?.(
        `${o.name} lost port ${ports.join(', ')} to another process before binding it; attempt ${attempt + 1} of ${attempts} on new ports`,
      );
    }
  }
}
