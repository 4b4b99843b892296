// Where the harness finds its binaries and keeps its persistent cluster. One place that
// reads the environment, so cluster.ts, cli.ts and the tests agree on the same locations
// as build-control-plane.sh (which also honours AIOPS_CACHE).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Names of the executables the harness runs; build-control-plane.sh symlinks each into the bin dir. */
export const COMPONENT_BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;

/** Directory of this harness (test/harness), used to locate build-control-plane.sh. */
export const HARNESS_DIR = dirname(fileURLToPath(import.meta.url));

/** Path of the script that builds the control-plane binaries from Go modules. */
export const BUILD_SCRIPT = join(HARNESS_DIR, 'build-control-plane.sh');

/** Cache root: `$AIOPS_CACHE`, default `~/.cache/aiops`. */
export function cacheDir(): string {
  return process.env['AIOPS_CACHE'] ?? join(homedir(), '.cache', 'aiops');
}

/** Binary dir: `$AIOPS_BIN_DIR`, default `<cacheDir>/bin` (where build-control-plane.sh writes). */
export function defaultBinDir(): string {
  return process.env['AIOPS_BIN_DIR'] ?? join(cacheDir(), 'bin');
}

/** Directory of the persistent (CLI) cluster: `$AIOPS_CLUSTER_DIR`, default `<cacheDir>/cluster`. */
export function persistentClusterDir(): string {
  return process.env['AIOPS_CLUSTER_DIR'] ?? join(cacheDir(), 'cluster');
}

/** Names of the component binaries that are missing (or not executable) in `binDir`. */
export function missingBinaries(binDir: string): string[] {
  return COMPONENT_BINARIES.filter((name) => !existsSync(join(binDir, name)));
}
