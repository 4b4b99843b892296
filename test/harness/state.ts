// The persistent cluster's state file (<cluster dir>/state.json): what `npm run cluster -- up`
// started (pids, binaries, ports, kubeconfig, the optional Prometheus), so later `env`,
// `status` and `down` calls, in other processes, can find and stop it.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterState } from './cluster.ts';
import type { LocalPrometheusInfo } from './local-prometheus.ts';
import { isRunning } from './process.ts';

/** The state file's content: the cluster, and the Prometheus `up --prometheus` started beside it. */
export interface CliState extends ClusterState {
  /** Set by `up --prometheus`; its processes are among `components`. */
  readonly prometheus?: LocalPrometheusInfo;
}

/** Path of the state file inside a cluster dir. */
export const statePath = (dir: string): string => join(dir, 'state.json');

/** Writes the state file (pretty JSON). */
export async function writeState(state: CliState): Promise<void> {
  await writeFile(statePath(state.dir), JSON.stringify(state, null, 2) + '\n');
}

/** Reads the state file of `dir`; `undefined` if there is none. Throws if it is not valid JSON. */
export async function readState(dir: string): Promise<CliState | undefined> {
  const path = statePath(dir);
  if (!existsSync(path)) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as CliState;
}

/** Per recorded component: name, pid and whether that pid still runs the recorded binary. */
export function componentLiveness(state: ClusterState): { name: string; pid: number; running: boolean }[] {
  return state.components.map((c) => ({ name: c.name, pid: c.pid, running: isRunning(c.pid, c.binary) }));
}
