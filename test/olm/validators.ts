// Finds and runs the ecosystem's own validators — OLM's (operator-sdk, opm) and krew's
// (krew, validate-krew-manifest) — which test/harness/build-control-plane.sh builds from Go
// modules into the shared cache. A missing binary skips the tests that need it only while
// AIOPS_REQUIRE_VALIDATORS is unset (CI sets it, so there a missing validator fails the run
// instead of hiding it).

import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { awaitBuild } from '../harness/pending-builds.ts';
import { skipUnlessRequired } from '../harness/required.ts';

/** Repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export type Validator = 'operator-sdk' | 'opm' | 'krew' | 'validate-krew-manifest';

/** The build-control-plane.sh target that builds each validator. */
const TARGET: Readonly<Record<Validator, 'operator-sdk' | 'opm' | 'krew'>> = {
  'operator-sdk': 'operator-sdk',
  opm: 'opm',
  krew: 'krew',
  'validate-krew-manifest': 'krew',
};

/** Path of a validator in the build cache (`$AIOPS_CACHE/bin`, default `~/.cache/aiops/bin`). */
export function validatorPath(name: Validator): string {
  return join(process.env['AIOPS_CACHE'] ?? join(homedir(), '.cache', 'aiops'), 'bin', name);
}

/**
 * `false` when the validator is there; a skip reason when it is missing and allowed to be.
 * Throws when it is missing and AIOPS_REQUIRE_VALIDATORS is set.
 */
export function skipUnless(name: Validator): string | false {
  awaitBuild(TARGET[name]);
  const path = validatorPath(name);
  const why = existsSync(path)
    ? undefined
    : `${path} is missing: run bash test/harness/build-control-plane.sh ${TARGET[name]}`;
  return skipUnlessRequired('AIOPS_REQUIRE_VALIDATORS', why) ?? false;
}

/** Outcome of one validator run; `code` is the exit status. */
export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a validator with `args` in `cwd` (default: the repository root) and `env` (default:
 * this process's environment); never throws on a non-zero exit.
 */
export function run(
  name: Validator,
  args: readonly string[],
  cwd = ROOT,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(validatorPath(name), args, { cwd, env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(new Error(`cannot run ${name}: ${error.message}`, { cause: error }));
        return;
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}

/** A scratch copy of `rel` (a directory of the repository); removed by the returned cleanup. */
export function scratchCopy(rel: string): { dir: string; cleanup: () => void } {
  const base = mkdtempSync(join(tmpdir(), 'aiops-olm-'));
  const dir = join(base, rel.split('/').at(-1) ?? 'copy');
  cpSync(join(ROOT, rel), dir, { recursive: true });
  return { dir, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}
