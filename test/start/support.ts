// What the npm start test does beside running npm start: the README walkthrough run as typed
// against the cluster npm start left, the waits for the demo StatefulSets to reach their scale
// bounds, and the look at a run's session for processes left behind. Kept apart so the test
// file reads as its cases.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../harness/wait.ts';
import { readmeShBlock } from '../real-node/support.ts';

const execAsync = promisify(execFile);

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

/** Waits up to 15 s for the session `sid` to empty (children finish their shutdown); returns who is left. */
export async function sessionEmpties(sid: number): Promise<number[]> {
  const deadline = Date.now() + 15_000;
  let left = sessionMembers(sid);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = sessionMembers(sid);
  }
  return left;
}

/** `pid: command line` of each of `pids`, one a line. */
export const describeLeft = (pids: number[]): string =>
  pids.map((p) => `${p}: ${readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ')}`).join('\n');

/**
 * How long the kwok nodes must have lived before the demo is judged: the node lifecycle
 * controller's grace period (kube-controller-manager's default --node-monitor-grace-period,
 * 50 s) and a margin. A node whose heartbeats do not outlast it flips NotReady by then, and
 * the Pods on it stay Ready=False (see KWOK_CONFIG).
 */
export const NODE_GRACE_MS = 60_000;

/** kubectl against the cluster of `clusterDir` (npm start's AIOPS_CLUSTER_DIR), parsed as JSON. */
export async function kubectlJson<T>(clusterDir: string, ...args: string[]): Promise<T> {
  const { stdout } = await execAsync('kubectl', [
    `--kubeconfig=${join(clusterDir, 'kubeconfig')}`,
    ...args,
    '-o',
    'json',
  ]);
  return JSON.parse(stdout) as T;
}

interface Listed<T> {
  items: T[];
}
interface NodeLike {
  metadata: { name: string; creationTimestamp: string };
}
interface WorkloadLike {
  metadata: { name: string };
  spec: { replicas?: number };
  status?: { readyReplicas?: number };
}

/** What the demo walkthrough saw: the block's output, NodeNotReady Events, Deployments' readiness before it. */
export interface Walkthrough {
  output: string;
  nodeNotReady: number;
  nodesAgeMs: number;
  deployments: string[];
}

/**
 * Once the kwok nodes are NODE_GRACE_MS old, runs the README's demo walkthrough (the sh block
 * with `kubectl aiops describe web-load` under "The two commands") as typed, in bash with
 * errexit, in `root` against the running npm start of `clusterDir`: only its port 9464
 * becomes `demoPort` and its last line (`npm run cluster -- down`, which the test's `after`
 * hook runs) is left out. Fails after 5 minutes.
 */
export async function demoWalkthrough(
  root: string,
  clusterDir: string,
  demoPort: number,
): Promise<Walkthrough> {
  const nodes = await kubectlJson<Listed<NodeLike>>(clusterDir, 'get', 'nodes');
  const newest = Math.max(...nodes.items.map((n) => Date.parse(n.metadata.creationTimestamp)));
  const wait = newest + NODE_GRACE_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const block = readmeShBlock('## The two commands', 'kubectl aiops describe web-load');
  const typed = block
    .replace(/^npm run cluster -- down.*$/m, '')
    .replaceAll('localhost:9464/', `localhost:${demoPort}/`);
  assert.notEqual(typed, block, 'the block names port 9464 and ends with cluster down');
  // Before the block: its curl breaches web-load, which then scales web.
  const deps = await kubectlJson<Listed<WorkloadLike>>(clusterDir, 'get', 'deployments', '-n', 'demo');
  const env: NodeJS.ProcessEnv = { ...process.env, AIOPS_CLUSTER_DIR: clusterDir };
  delete env['KUBECONFIG'];
  const { stdout, stderr } = await execAsync('bash', ['-euo', 'pipefail', '-c', typed], {
    cwd: root,
    env,
    timeout: 300_000,
  });
  const events = await kubectlJson<Listed<unknown>>(
    clusterDir,
    'get',
    'events',
    '-A',
    '--field-selector=reason=NodeNotReady',
  );
  return {
    output: `${stdout}\n${stderr}`,
    nodeNotReady: events.items.length,
    nodesAgeMs: Date.now() - newest,
    deployments: deps.items.map(
      (d) => `${d.metadata.name} ${d.status?.readyReplicas ?? 0}/${d.spec.replicas ?? 1}`,
    ),
  };
}

/** A StatefulSet's replicas once its AITask stopped at a scale bound, and the bound it names. */
export interface AtBound {
  replicas: number | undefined;
  blockedBy: string | undefined;
}

/**
 * Waits (up to 3 minutes) until the AITask `task` of namespace demo says its last decision was
 * stopped by `bound` (AtMaxReplicas or AtMinReplicas: the operator scaled its StatefulSet a
 * step at a time to that bound), then returns the StatefulSet `statefulset`'s replicas and the
 * task's refusal.
 */
export async function scaledToItsBound(
  clusterDir: string,
  task: string,
  statefulset: string,
  bound: 'AtMaxReplicas' | 'AtMinReplicas',
): Promise<AtBound> {
  interface Task {
    status?: { lastDecision?: { blockedBy?: string } };
  }
  const blockedBy = await waitFor(
    `${task} to reach ${bound}`,
    async () => {
      const t = await kubectlJson<Task>(
        clusterDir,
        'get',
        'aitasks.v2.aiops.example.com',
        task,
        '-n',
        'demo',
      );
      return t.status?.lastDecision?.blockedBy === bound ? bound : undefined;
    },
    { deadline: Date.now() + 180_000, watch: [], intervalMs: 1000 },
  );
  const sts = await kubectlJson<WorkloadLike>(clusterDir, 'get', 'statefulset', statefulset, '-n', 'demo');
  return { replicas: sts.spec.replicas, blockedBy };
}
