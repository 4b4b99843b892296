// Where the monitoring tests find promtool and prometheus-operator's CRDs: what
// test/harness/build-control-plane.sh `promtool` and `monitoring-crds` put in the cache's bin
// dir. A missing one skips the test with the command that makes it, unless
// AIOPS_REQUIRE_VALIDATORS is set (CI), where it fails instead.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultBinDir } from '../harness/paths.ts';
import { awaitBuild } from '../harness/pending-builds.ts';
import { skipUnlessRequired } from '../harness/required.ts';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The promtool binary build-control-plane.sh promtool links into the bin dir. */
export function promtoolPath(): string {
  return join(defaultBinDir(), 'promtool');
}

/** The directory of the ServiceMonitor and PrometheusRule CRDs (build-control-plane.sh monitoring-crds). */
export function monitoringCRDsDir(): string {
  return join(defaultBinDir(), 'monitoring-crds');
}

/** The CRD files in monitoringCRDsDir. */
export const MONITORING_CRD_FILES = [
  'monitoring.coreos.com_servicemonitors.yaml',
  'monitoring.coreos.com_prometheusrules.yaml',
] as const;

/**
 * `false` when `path` exists; else a skip reason naming the build-control-plane.sh `target`
 * that makes it. Throws instead when AIOPS_REQUIRE_VALIDATORS is set.
 */
export function skipUnlessPresent(path: string, target: 'promtool' | 'monitoring-crds'): string | false {
  awaitBuild(target);
  const why = existsSync(path)
    ? undefined
    : `${path} is missing: run bash test/harness/build-control-plane.sh ${target}`;
  return skipUnlessRequired('AIOPS_REQUIRE_VALIDATORS', why) ?? false;
}

/** Runs promtool with `args` in `cwd` (default the repository root); never throws on a non-zero exit. */
export function promtool(
  args: readonly string[],
  cwd = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(promtoolPath(), args, { cwd }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(new Error(`cannot run promtool: ${error.message}`, { cause: error }));
        return;
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}
