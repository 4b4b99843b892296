// Benchmark section `plugin`: wall time of `kubectl aiops describe X`,
// `explain-phase X` and `--help` through the real kubectl, as the launcher + bundle and as
// the single executable, against `kubectl get at X -o yaml` and `kubectl --help` measured in
// the same run, interleaved so machine load hits all equally; and the single executable run
// directly, which is what the plugin itself costs without kubectl's start and plugin look-up
// in front. Prints medians, p90s and each command's ratio to its baseline.
// Standalone: AIOPS_TEST_KUBECONFIG=... node test/bench/plugin.ts

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { freshNamespace, KUBECONFIG_ENV, testAITasks, testTransport } from '../support/cluster.ts';
import { Resources } from '../../plugin/kinds.ts';
import {
  buildAndInstall,
  kubectl,
  singleExecutable,
  userPath,
  type KubectlResult,
} from '../support/kubectl-run.ts';
import { deployment } from '../support/workloads.ts';

/** Runs per command (after 2 warm-up runs each). */
const RUNS = 20;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Runs `exe args` with only HOME and `env` in its environment. */
function direct(exe: string, args: readonly string[], env: Record<string, string>): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(exe, [...args], { env: { HOME: process.env['HOME'] ?? '', ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the section against the cluster of `env.env[AIOPS_TEST_KUBECONFIG]` (default: the process env). */
export async function bench(env?: { env: Record<string, string> }): Promise<void> {
  const kubeconfig = env?.env[KUBECONFIG_ENV] ?? process.env[KUBECONFIG_ENV];
  if (kubeconfig === undefined) throw new Error(`${KUBECONFIG_ENV} is not set`);
  process.env[KUBECONFIG_ENV] = kubeconfig;
  const path = buildAndInstall();
  const ns = await freshNamespace('plugin-bench');
  await new ResourceClient(await testTransport(), Resources.deployments).create(ns, deployment('web', 1));
  const tasks = await testAITasks('v2');
  await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'web' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8 },
      remediation: { action: 'ScaleUp' },
    },
  });
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await tasks.patchStatus(ns, 'web', {
    phase: 'Monitoring',
    observedGeneration: 1,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Healthy', message: 'ok', lastTransitionTime: now },
    ],
  });
  const sea = mkdtempSync(join(tmpdir(), 'aiops-plugin-sea-'));
  symlinkSync(singleExecutable(), join(sea, 'kubectl-aiops'));
  const seaPath = userPath(sea);
  const GET = 'kubectl get at X -o yaml';
  const HELP = 'kubectl --help';
  /**
   * name → kubectl args, the PATH it runs with, and the baseline its ratio is to; with
   * `exe`, the args are that executable's, run without kubectl.
   */
  const commands: Record<string, { args: string[]; path: string; base: string; exe?: string }> = {
    [GET]: { args: ['get', 'at', 'web', '-n', ns, '-o', 'yaml'], path, base: GET },
    [HELP]: { args: ['--help'], path, base: HELP },
    'kubectl aiops describe X': { args: ['aiops', 'describe', 'web', '-n', ns], path, base: GET },
    'kubectl aiops explain-phase X': { args: ['aiops', 'explain-phase', 'web', '-n', ns], path, base: GET },
    'kubectl aiops --help': { args: ['aiops', '--help'], path, base: HELP },
    'describe X, single executable': {
      args: ['aiops', 'describe', 'web', '-n', ns],
      path: seaPath,
      base: GET,
    },
    'explain-phase X, single executable': {
      args: ['aiops', 'explain-phase', 'web', '-n', ns],
      path: seaPath,
      base: GET,
    },
    '--help, single executable': { args: ['aiops', '--help'], path: seaPath, base: HELP },
    'describe X, single executable, direct': {
      args: ['describe', 'web', '-n', ns],
      path: seaPath,
      base: GET,
      exe: singleExecutable(),
    },
    '--help, single executable, direct': {
      args: ['--help'],
      path: seaPath,
      base: HELP,
      exe: singleExecutable(),
    },
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = -2; i < RUNS; i++)
    for (const [name, c] of Object.entries(commands)) {
      const t0 = performance.now();
      const r =
        c.exe !== undefined
          ? await direct(c.exe, c.args, { PATH: c.path, KUBECONFIG: kubeconfig })
          : await kubectl(c.path, c.args, { KUBECONFIG: kubeconfig });
      if (r.code !== 0) throw new Error(`${name} failed (${r.code}): ${r.stderr}`);
      if (i >= 0) times[name]?.push(performance.now() - t0);
    }
  const median = (name: string): number =>
    quantile(
      [...(times[name] ?? [])].sort((a, b) => a - b),
      0.5,
    );
  process.stdout.write(
    `\n## plugin: wall time through kubectl, ${RUNS} runs each (ratio to ${GET} or ${HELP})\n`,
  );
  for (const [name, c] of Object.entries(commands)) {
    const sorted = [...(times[name] ?? [])].sort((a, b) => a - b);
    process.stdout.write(
      `${name.padEnd(40)} median ${median(name).toFixed(0).padStart(4)} ms   p90 ${quantile(sorted, 0.9).toFixed(0).padStart(4)} ms   ratio ${(median(name) / median(c.base)).toFixed(2)}x\n`,
    );
  }
  rmSync(sea, { recursive: true, force: true });
  const ns0 = new ResourceClient(await testTransport(), {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    namespaced: false,
  });
  await ns0.delete(undefined, ns);
}

if (import.meta.main) await bench();
