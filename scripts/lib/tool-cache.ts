// Where the tools the scripts and the tests run are built and kept: the cache root, its bin
// dir, and the script that builds them from Go modules (test/harness/build-control-plane.sh,
// which also honours AIOPS_CACHE). One place that reads the environment, so `npm start`, the
// harness and the tests agree on the same locations.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Path of the script that builds the control-plane binaries and tools from Go modules. */
export const BUILD_SCRIPT = fileURLToPath(
  new URL('../../test/harness/build-control-plane.sh', import.meta.url),
);

/** Cache root: `$AIOPS_CACHE`, default `~/.cache/aiops`. */
export function cacheDir(): string {
  return process.env['AIOPS_CACHE'] ?? join(homedir(), '.cache', 'aiops');
}

/** Binary dir: `$AIOPS_BIN_DIR`, default `<cacheDir>/bin` (where build-control-plane.sh writes). */
export function defaultBinDir(): string {
  return process.env['AIOPS_BIN_DIR'] ?? join(cacheDir(), 'bin');
}
