// .ci/run starts `npm test` while its build lanes still run (OLM, the validators, krew, Helm,
// promtool and the LLM test server take most of a cold run's build time), so the suites that
// need only the control plane and Prometheus, which the environment itself waits for, run
// beside those builds instead of after them. It names a directory in AIOPS_BUILDS_DIR where
// each lane writes one mark per target as that target ends: `ok`, or `failed: <why>`.
// A suite that needs a tool calls awaitBuild(target) before it looks for the binary; without
// AIOPS_BUILDS_DIR (a contributor's `npm test`) it returns at once and nothing changes.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The .ci/run lane targets a suite can wait for (build-control-plane.sh targets, and `llama`). */
export const BUILD_TARGETS = [
  'node',
  'operator-sdk',
  'opm',
  'krew',
  'olm',
  'helm',
  'promtool',
  'monitoring-crds',
  'llama',
] as const;

/** One of BUILD_TARGETS. */
export type BuildTarget = (typeof BUILD_TARGETS)[number];

/** How long awaitBuild waits for a mark before it lets the suite look anyway, in ms (45 min). */
export const BUILD_WAIT_MS = 45 * 60_000;

/** How often awaitBuild looks for the mark, in ms. */
const POLL_MS = 500;

/** Blocks this thread for `ms` (the wait runs while a test file loads, before any test starts). */
const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * When AIOPS_BUILDS_DIR is set, blocks until .ci/run's lane has marked `target` finished (ok or
 * failed), at most BUILD_WAIT_MS, saying once on stderr what it waits for. Returns the mark's
 * text (`ok`, `failed: …`) or undefined (no directory, or no mark in time): the caller then
 * checks for the binary as always, so a failed or missing build still fails the suite by name.
 */
export function awaitBuild(target: BuildTarget): string | undefined {
  const dir = process.env['AIOPS_BUILDS_DIR'];
  if (dir === undefined || dir === '') return undefined;
  const mark = join(dir, target);
  const deadline = Date.now() + BUILD_WAIT_MS;
  let said = false;
  while (!existsSync(mark)) {
    if (Date.now() >= deadline) return undefined;
    if (!said) process.stderr.write(`[pending-builds] waiting for .ci/run's ${target} build\n`);
    said = true;
    sleepSync(POLL_MS);
  }
  return readFileSync(mark, 'utf8').trim();
}

/**
 * Whether awaitBuild(`target`) would return at once: AIOPS_BUILDS_DIR is unset, or the lane
 * has marked `target` (ok or failed).
 */
export function buildEnded(target: BuildTarget): boolean {
  const dir = process.env['AIOPS_BUILDS_DIR'];
  return dir === undefined || dir === '' || existsSync(join(dir, target));
}

/**
 * Whether AIOPS_BUILDS_DIR is set and some BUILD_TARGETS has no mark yet: .ci/run's lanes are
 * still compiling (npm test's CPU hog waits for them, which load every core meanwhile).
 */
export function buildsPending(): boolean {
  return BUILD_TARGETS.some((t) => !buildEnded(t));
}
