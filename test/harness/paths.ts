// Where the harness finds its binaries and keeps its persistent cluster: the tool cache of
// scripts/lib/tool-cache.ts (shared with `npm start`), and the harness's own places in it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../../scripts/lib/tool-cache.ts';

export { BUILD_SCRIPT, cacheDir, defaultBinDir } from '../../scripts/lib/tool-cache.ts';

/** Names of the executables the harness runs; build-control-plane.sh symlinks each into the bin dir. */
export const COMPONENT_BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;

/** Directory of this harness (test/harness), where its scripts and tool sources are. */
export const HARNESS_DIR = dirname(fileURLToPath(import.meta.url));

/** Directory of the persistent (CLI) cluster: `$AIOPS_CLUSTER_DIR`, default `<cacheDir>/cluster`. */
export function persistentClusterDir(): string {
  return process.env['AIOPS_CLUSTER_DIR'] ?? join(cacheDir(), 'cluster');
}

/** Names of the component binaries that are missing (or not executable) in `binDir`. */
export function missingBinaries(binDir: string): string[] {
  return COMPONENT_BINARIES.filter((name) => !existsSync(join(binDir, name)));
}
