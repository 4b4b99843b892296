// Benchmark section `plugin` (DESIGN §9): wall time of `kubectl aiops describe X`,
// `explain-phase X` and `--help` through the real kubectl, against `kubectl get at X -o yaml`
// measured in the same run, interleaved so machine load hits all equally. Prints medians,
// p90s and ratios. Standalone: AIOPS_TEST_KUBECONFIG=... node test/bench/plugin.ts

import { ResourceClient } from '../../api/kube/resources.ts';
import { freshNamespace, KUBECONFIG_ENV, testAITasks, testTransport } from '../support/cluster.ts';
import { Resources } from '../../plugin/kinds.ts';
import { buildAndInstall, kubectl } from '../../plugin/kubectl-run.ts';
import { deployment } from '../support/workloads.ts';

/** Runs per command (after 2 warm-up runs each). */
const RUNS = 20;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
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
  const commands: Record<string, string[]> = {
    'kubectl get at X -o yaml': ['get', 'at', 'web', '-n', ns, '-o', 'yaml'],
    'kubectl aiops describe X': ['aiops', 'describe', 'web', '-n', ns],
    'kubectl aiops explain-phase X': ['aiops', 'explain-phase', 'web', '-n', ns],
    'kubectl aiops --help': ['aiops', '--help'],
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = -2; i < RUNS; i++)
    for (const [name, args] of Object.entries(commands)) {
      const t0 = performance.now();
      const r = await kubectl(path, args, { KUBECONFIG: kubeconfig });
      if (r.code !== 0) throw new Error(`${name} failed (${r.code}): ${r.stderr}`);
      if (i >= 0) times[name]?.push(performance.now() - t0);
    }
  const base = quantile(
    [...(times['kubectl get at X -o yaml'] ?? [])].sort((a, b) => a - b),
    0.5,
  );
  process.stdout.write(
    `\n## plugin: wall time through kubectl, ${RUNS} runs each (baseline: kubectl get at X -o yaml)\n`,
  );
  for (const [name, list] of Object.entries(times)) {
    const sorted = [...list].sort((a, b) => a - b);
    const median = quantile(sorted, 0.5);
    process.stdout.write(
      `${name.padEnd(32)} median ${median.toFixed(0).padStart(4)} ms   p90 ${quantile(sorted, 0.9).toFixed(0).padStart(4)} ms   ratio ${(median / base).toFixed(2)}x\n`,
    );
  }
  const ns0 = new ResourceClient(await testTransport(), {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    namespaced: false,
  });
  await ns0.delete(undefined, ns);
}

if (import.meta.main) await bench();
