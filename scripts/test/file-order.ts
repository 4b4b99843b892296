// The order npm test runs its files in. Under .ci/run some files wait for a tool still
// compiling (the LLM server, Helm, OLM and opm are built while the tests run); in name order the
// first OLM file blocked the real-node lane for minutes, and an LLM file a slot of the busy
// phase, while files that need no pending tool queued behind them. So each file's waits are
// read from its source and the modules it imports directly (the literal awaitBuild calls: a
// file asks for its tool through a helper such as skipUnlessHelm or olmUnavailable) and the
// runner takes next the first file whose tools are all built. Deeper imports are not read: the
// cluster harness can start OLM, but only for the files that ask, and those import OLM's helper
// themselves. An order read wrong costs time, never a result: each file still waits for its own
// tools. Pure but for the reads it is handed (sourceReader).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { BUILD_TARGETS, type BuildTarget } from '../../test/harness/pending-builds.ts';

/** The module that defines awaitBuild: it waits for nothing itself. */
const DEFINING_MODULE = 'test/harness/pending-builds.ts';

/** `source` without its comments (a `//` inside a string cuts that line short: a wider wait at worst). */
const withoutComments = (source: string): string =>
  source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/** The relative specifiers `source` imports or re-exports from (`./x.ts`, `../y/z.ts`). */
export function relativeImports(source: string): string[] {
  const found = withoutComments(source).matchAll(/(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.\.?\/[^'"]+)\1/g);
  return [...found].map((m) => m[2] ?? '').filter((s) => s !== '');
}

/**
 * The builds `source` waits for itself: the target of each `awaitBuild('target')`; every
 * BUILD_TARGETS when a call names its target any other way (it may wait for any of them).
 */
export function buildsAwaited(source: string): BuildTarget[] {
  const code = withoutComments(source);
  const calls = [...code.matchAll(/\bawaitBuild\s*\(\s*([^)]*)\)/g)].map((m) => (m[1] ?? '').trim());
  const targets = new Set<BuildTarget>();
  for (const arg of calls) {
    const literal = /^(['"])([\w-]+)\1$/.exec(arg)?.[2];
    const known = BUILD_TARGETS.find((t) => t === literal);
    if (known === undefined) return [...BUILD_TARGETS];
    targets.add(known);
  }
  return [...targets];
}

/** Reads a module's source by its path from `root`; undefined when there is no such file. */
export const sourceReader =
  (root: string) =>
  (path: string): string | undefined => {
    const file = join(root, path);
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  };

/**
 * Every build `file` (a path from the repository's root) waits for through its own source and
 * the modules it imports by relative path directly. `read` returns a module's source, or
 * undefined when there is none (a path outside the repository, a generated file): sourceReader.
 */
export function buildsNeeded(file: string, read: (path: string) => string | undefined): Set<BuildTarget> {
  const needed = new Set<BuildTarget>();
  const source = read(normalize(file));
  if (source === undefined) return needed;
  const modules = [normalize(file), ...relativeImports(source).map((s) => normalize(join(dirname(file), s)))];
  for (const path of new Set(modules)) {
    const text = path === normalize(file) ? source : read(path);
    if (text !== undefined && path !== DEFINING_MODULE) for (const t of buildsAwaited(text)) needed.add(t);
  }
  return needed;
}

/**
 * The file the lane runs next: the first of `queue` whose needed builds are all `built`, or the
 * first of `queue` when none is (it then waits for its own). `queue` must not be empty.
 */
export function nextFile(
  queue: readonly string[],
  needs: (file: string) => ReadonlySet<BuildTarget>,
  built: (target: BuildTarget) => boolean,
): string {
  const first = queue[0];
  if (first === undefined) throw new Error('nextFile: the queue is empty');
  return queue.find((f) => [...needs(f)].every(built)) ?? first;
}
