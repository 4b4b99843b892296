// Leaf-level diff and guarded patching of JSON values: the mechanism that makes
// conversion lossless. A diff entry records the path, the value wanted there and the
// value it replaces (the base); applying an entry only when the base is still in place
// means a value the user changed through another version is never overwritten.

/** A JSON value as it travels through the apiserver. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One change: at path `p`, `v` is wanted (absent: delete) where `b` was (absent: nothing). */
export interface DiffEntry {
  p: string[];
  v?: Json;
  b?: Json;
}

function isObject(x: unknown): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Structural equality of JSON values (`undefined` equals only `undefined`). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The entries that turn `from` into `to`. Objects present on both sides are compared key
 * by key; everything else (arrays, scalars, type changes) is replaced whole.
 */
export function diff(from: unknown, to: unknown, path: string[] = []): DiffEntry[] {
  if (isObject(from) && isObject(to)) {
    const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])];
    return keys.flatMap((k) => diff(from[k], to[k], [...path, k]));
  }
  if (deepEqual(from, to)) return [];
  const entry: DiffEntry = { p: path };
  if (to !== undefined) entry.v = to as Json;
  if (from !== undefined) entry.b = from as Json;
  return [entry];
}

/** Reads the value at `path`, or undefined. */
export function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const k of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/**
 * Applies each entry whose base still matches the value at its path (all of them when
 * `guarded` is false). Mutates and returns `obj`; creates missing parent objects.
 */
export function applyDiff<T>(obj: T, entries: readonly DiffEntry[], guarded: boolean): T {
  for (const e of entries) {
    if (e.p.length === 0) continue;
    if (guarded && !deepEqual(getPath(obj, e.p), e.b)) continue;
    let cur = obj as unknown as Record<string, Json>;
    for (const k of e.p.slice(0, -1)) {
      const next = cur[k];
      if (!isObject(next)) cur[k] = {};
      cur = cur[k] as Record<string, Json>;
    }
    const last = e.p[e.p.length - 1] as string;
    if (e.v === undefined) Reflect.deleteProperty(cur, last);
    else cur[last] = structuredClone(e.v);
  }
  return obj;
}

/** True when `x` is a well-formed list of diff entries (used to vet annotation content). */
export function isDiffEntries(x: unknown): x is DiffEntry[] {
  return (
    Array.isArray(x) &&
    x.every((e) => isObject(e) && Array.isArray(e['p']) && e['p'].every((k) => typeof k === 'string'))
  );
}
