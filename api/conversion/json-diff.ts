// Leaf-level diff and guarded patching of JSON values: the mechanism that makes
// conversion lossless. A diff entry records the path, the value wanted there and the
// value it replaces (the base); applying an entry only when the base is still in place
// means a value the user changed through another version is never overwritten.
// Paths may come from an annotation anyone can write, so they are data: only own
// properties are read or written, and a path with a prototype segment is never applied.

/** A JSON value as it travels through the apiserver. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One change: at path `p`, `v` is wanted (absent: delete) where `b` was (absent: nothing). */
export interface DiffEntry {
  p: string[];
  v?: Json;
  b?: Json;
}

/** Path segments that reach a prototype instead of a property; a path holding one is never applied. */
export const UNSAFE_SEGMENTS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** True when no segment of `path` is one of UNSAFE_SEGMENTS. */
export function isSafePath(path: readonly string[]): boolean {
  return path.every((k) => !UNSAFE_SEGMENTS.includes(k));
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

/** Reads the own property at `path`, or undefined (never an inherited one). */
export function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const k of path) {
    if (!isObject(cur) || !Object.hasOwn(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/**
 * `obj` with entry `e` applied, guarded, as a new value that shares every object off the
 * entry's path with `obj` (neither is changed); `obj` itself when the base no longer
 * matches, the path is empty or it holds an unsafe segment.
 */
export function withEntry<T>(obj: T, e: DiffEntry): T {
  if (e.p.length === 0 || !isSafePath(e.p) || !deepEqual(getPath(obj, e.p), e.b)) return obj;
  const set = (cur: unknown, depth: number): unknown => {
    const copy: Record<string, unknown> = isObject(cur) ? { ...cur } : {};
    const k = e.p[depth] as string;
    if (depth === e.p.length - 1) {
      if (e.v === undefined) Reflect.deleteProperty(copy, k);
      else copy[k] = structuredClone(e.v);
    } else copy[k] = set(Object.hasOwn(copy, k) ? copy[k] : undefined, depth + 1);
    return copy;
  };
  return set(obj, 0) as T;
}
