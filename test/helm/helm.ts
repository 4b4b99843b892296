// The real `helm` (built from its Go module by test/harness/build-control-plane.sh helm into
// the shared cache) for the chart's tests: where it is, whether a suite may skip without it
// (not in CI: AIOPS_REQUIRE_VALIDATORS or AIOPS_REQUIRE_REAL_NODE make a missing helm a
// failure), running it, and rendering a chart into objects.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { defaultBinDir } from '../harness/paths.ts';
import { awaitBuild } from '../harness/pending-builds.ts';
import { skipUnlessRequired } from '../harness/required.ts';

/** Path of helm in the build cache. */
export function helmPath(): string {
  return join(defaultBinDir(), 'helm');
}

/**
 * `false` when helm is there; a skip reason when it is missing and may be; throws when it is
 * missing and `variable` (a CI requirement variable) is set.
 */
export function skipUnlessHelm(variable = 'AIOPS_REQUIRE_VALIDATORS'): string | false {
  awaitBuild('helm');
  const why = existsSync(helmPath())
    ? undefined
    : `${helmPath()} is missing: run bash test/harness/build-control-plane.sh helm`;
  return skipUnlessRequired(variable, why) ?? false;
}

/** Outcome of one helm run. */
export interface HelmRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm with `args` and `env` over this process's environment; never throws on an exit code. */
export function helm(args: readonly string[], env: NodeJS.ProcessEnv = {}): HelmRun {
  const r = spawnSync(helmPath(), args, {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/** A rendered Kubernetes object. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}

/** Every object of a multi-document YAML text (empty documents dropped). */
export function objectsOf(yaml: string): K8sObject[] {
  return loadAll(yaml).filter((d): d is K8sObject => typeof d === 'object' && d !== null && 'kind' in d);
}

/**
 * `helm template` of `chart` as release `aiops` in `namespace` (default aiops-system) with
 * `--set` pairs; throws with helm's stderr when it fails.
 */
export function renderChart(
  chart: string,
  set: readonly string[],
  options: { namespace?: string; includeCrds?: boolean } = {},
): K8sObject[] {
  const r = helm([
    'template',
    'aiops',
    chart,
    '--namespace',
    options.namespace ?? 'aiops-system',
    ...(options.includeCrds === true ? ['--include-crds'] : []),
    ...set.flatMap((s) => ['--set', s]),
  ]);
  if (r.code !== 0) throw new Error(`helm template failed (${r.code}): ${r.stderr}`);
  return objectsOf(r.stdout);
}

/**
 * `helm template` (or `lint --strict`) of `chart` as release `aiops` in aiops-system, with a
 * prometheus.url and `targetKinds` (as JSON) for the value of that name; never throws on an
 * exit code. A template run shows templates/rbac.yaml only.
 */
export function helmWithTargetKinds(
  command: 'template' | 'lint',
  chart: string,
  targetKinds: unknown,
): HelmRun {
  return helm([
    ...(command === 'template' ? ['template', 'aiops'] : ['lint', '--strict']),
    chart,
    '--namespace',
    'aiops-system',
    '--set',
    'prometheus.url=http://prometheus-operated.monitoring:9090',
    '--set-json',
    `targetKinds=${JSON.stringify(targetKinds)}`,
    ...(command === 'template' ? ['--show-only', 'templates/rbac.yaml'] : []),
  ]);
}

/** The rules of the operator's ClusterRole (aiops-operator) among rendered `objects`. */
export function operatorClusterRules(objects: readonly K8sObject[]): unknown[] {
  const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'aiops-operator');
  if (role === undefined) throw new Error('no ClusterRole aiops-operator was rendered');
  return role['rules'] as unknown[];
}
