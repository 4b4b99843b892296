// The persistent cluster's state file (<cluster dir>/state.json): what `npm run cluster -- up`
// started (pids, binaries, ports, kubeconfig), so later `env`, `status` and `down` calls,
// in other processes, can find and stop it.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterState } from './cluster.ts';
import { isRunning } from './process.ts';

/** Path of the state file inside a cluster dir. */
export const statePath = (dir: string): string => join(dir, 'state.json');

/** Writes the state file (pretty JSON). */
export async function writeState(state: ClusterState): Promise<void> {
  await writeFile(statePath(state.dir), JSON.stringify(state, null, 2) + '\n');
}

/** Reads the state file of `dir`; `undefined` if there is none. Throws if it is not valid JSON. */
export async function readState(dir: string): Promise<ClusterState | undefined> {
  const path = statePath(dir);
  if (!existsSync(path)) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as ClusterState;
}

/** Per recorded component: name, pid and whether that pid still runs the recorded binary. */
export function componentLiveness(state: ClusterState): { name: string; pid: number; running: boolean }[] {
  return state.components.map((c) => ({ name: c.name, pid: c.pid, running: isRunning(c.pid, c.binary) }));
}
