// The conversion stash as untrusted input. The stash annotation is written by the
// conversion webhook, but anyone who may write an AITask may write its annotations, and
// a replayed stash entry lands in the stored object or in what a client reads. So the
// stash is read only when the webhook's own MAC vouches for it, and even then as data:
//
// - Authenticity: CONVERSION_MAC_ANNOTATION holds `hmac-sha256:<uid>:<base64url>`, an
//   HMAC-SHA256 with a key only the operator holds over the object's metadata.uid and the
//   exact text of CONVERSION_ANNOTATION (no canonical form needed: the apiserver keeps an
//   annotation's text as written). A stash is trusted only when the MAC is valid and bound
//   to the uid of the object it is on, so a stash copied from another object is ignored.
//   The apiserver converts with the uid in place, creates included (it assigns the uid
//   before it converts to the storage version; test/conversion/stash.cluster.test.ts checks).
// - Bounds: the annotation's size, the number of entries, path and value depth are capped;
//   paths start at spec or status and never hold a prototype segment.
// - Schema: each entry is applied only when the result has no violation of the target
//   version's schema bounds or CEL rules it did not have before (bounds.ts); otherwise the
//   base mapping's value stays. A MAC vouches only that the webhook wrote the stash, not
//   that its content is valid: anyone can have the webhook sign a stash of their choosing.
//
// Whatever is ignored is reported to the caller (`onStashRejected`), never thrown: one
// tenant's annotation must not fail a ConversionReview that also carries others' objects.
// The one exception is a caller without a key (undefined: its host has not loaded it yet):
// signing a stash, or verifying a signature that is well formed and bound to the object's
// uid, then throws StashKeyMissingError, since guessing would lose or forge a field.
// Pure: the key is passed in; HMAC is computation, not I/O.

import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../install.ts';
import { VERSIONS, type VersionName } from '../crd.ts';
import type { JSONSchemaProps } from '../schema/infer.ts';
import type { Body } from './body.ts';
import { violations, type Violation } from './bounds.ts';
import { StashKeyMissingError } from './errors.ts';
import { getPath, isSafePath, withEntry, type DiffEntry, type Json } from './json-diff.ts';

/** Stash entries keyed by the version that holds the data. */
export type Stash = Partial<Record<VersionName, DiffEntry[]>>;

/** Caps on a stash read from an object; a stash over any of them is ignored whole. */
export const STASH_LIMITS = {
  /** Characters of the annotation (256 KiB: the apiserver's limit for all annotations together). */
  maxChars: 256 * 1024,
  /** Entries over all versions. */
  maxEntries: 256,
  /** Segments of one path (the schemas are at most 5 deep). */
  maxPathDepth: 16,
  /** Nesting of one entry's value or base (a condition list is 3 deep). */
  maxValueDepth: 16,
} as const;

/** The least key length the loaders accept, in bytes (the HMAC-SHA256 block strength). */
export const MIN_KEY_BYTES = 32;

/** Why (part of) a stash was ignored; the label of `aiops_conversion_stash_rejected_total`. */
export type StashRejectionReason =
  'unsigned' | 'forged' | 'foreign_uid' | 'malformed' | 'too_large' | 'unsafe_path' | 'out_of_bounds';

/** Every StashRejectionReason, for metrics that list their label values up front. */
export const STASH_REJECTION_REASONS: readonly StashRejectionReason[] = [
  'unsigned',
  'forged',
  'foreign_uid',
  'malformed',
  'too_large',
  'unsafe_path',
  'out_of_bounds',
];

/** One ignored stash or stash entry: the reason and a line for the log (no stash content). */
export interface StashRejection {
  readonly reason: StashRejectionReason;
  readonly detail: string;
}

/** Receives each rejection; conversion goes on without the rejected part. */
export type RejectionSink = (r: StashRejection) => void;

const MAC_PREFIX = 'hmac-sha256';

const keyObjects = new WeakMap<Uint8Array, KeyObject>();

function mac(key: Uint8Array | undefined, uid: string, text: string): Buffer {
  if (key === undefined)
    throw new StashKeyMissingError('no conversion stash key to sign or verify the stash with');
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac('sha256', keyObject).update(`aiops-conversion-stash\0${uid}\0`).update(text).digest();
}

/**
 * The CONVERSION_MAC_ANNOTATION value for stash `text` on an object with `uid` ("" when it
 * has none); throws StashKeyMissingError when `key` is undefined.
 */
export function signStash(key: Uint8Array | undefined, uid: string, text: string): string {
  return `${MAC_PREFIX}:${uid}:${mac(key, uid, text).toString('base64url')}`;
}

/** Why the MAC `signature` does not vouch for stash `text` on an object with `uid`, or undefined when it does. */
function distrust(
  key: Uint8Array | undefined,
  uid: string,
  text: string,
  signature: string | undefined,
): StashRejectionReason | undefined {
  if (signature === undefined) return 'unsigned';
  const parts = signature.split(':');
  const [prefix, boundUid, encoded] = parts;
  if (parts.length !== 3 || prefix !== MAC_PREFIX || boundUid === undefined || encoded === undefined)
    return 'forged';
  if (boundUid !== uid) return 'foreign_uid';
  const want = mac(key, uid, text);
  const got = Buffer.from(encoded, 'base64url');
  return got.length === want.length && timingSafeEqual(got, want) ? undefined : 'forged';
}

/** Nesting depth of a JSON value, counted without recursion; stops counting past `limit`. */
function depthOf(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, d] = next;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, d);
    if (max > limit) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** `x` as a list of entries within STASH_LIMITS, or why it is not one. */
function entriesOf(x: unknown): DiffEntry[] | StashRejection {
  if (!Array.isArray(x)) return { reason: 'malformed', detail: 'an entry list is not an array' };
  for (const e of x as unknown[]) {
    if (typeof e !== 'object' || e === null || Array.isArray(e))
      return { reason: 'malformed', detail: 'an entry is not an object' };
    const p = (e as Record<string, unknown>)['p'];
    if (!Array.isArray(p) || !p.every((k) => typeof k === 'string'))
      return { reason: 'malformed', detail: 'an entry path is not a list of strings' };
    if (p.length > STASH_LIMITS.maxPathDepth)
      return { reason: 'too_large', detail: `a path is deeper than ${STASH_LIMITS.maxPathDepth}` };
    const root = p[0];
    if (!isSafePath(p) || (root !== 'spec' && root !== 'status'))
      return { reason: 'unsafe_path', detail: 'a path leaves spec/status or names a prototype' };
    const { v, b } = e as Record<string, unknown>;
    if (
      depthOf(v, STASH_LIMITS.maxValueDepth) > STASH_LIMITS.maxValueDepth ||
      depthOf(b, STASH_LIMITS.maxValueDepth) > STASH_LIMITS.maxValueDepth
    )
      return { reason: 'too_large', detail: `a value is nested deeper than ${STASH_LIMITS.maxValueDepth}` };
  }
  return x as DiffEntry[];
}

/**
 * The stash of an object with `metadata`, when its MAC under `key` vouches for it; an empty
 * stash (and one rejection to `reject`) when it is unsigned, forged, bound to another
 * object, malformed or over STASH_LIMITS. Throws only StashKeyMissingError, when `key` is
 * undefined and the stash carries a well-formed MAC bound to this object (only the key can
 * tell whether it vouches); an unsigned or foreign stash is rejected without a key.
 */
export function readStash(
  metadata: { readonly uid?: string; readonly annotations?: Readonly<Record<string, string>> },
  key: Uint8Array | undefined,
  reject: RejectionSink,
): Stash {
  const annotations = metadata.annotations ?? {};
  const text = Object.hasOwn(annotations, CONVERSION_ANNOTATION)
    ? annotations[CONVERSION_ANNOTATION]
    : undefined;
  if (text === undefined) return {};
  if (typeof text !== 'string' || text.length > STASH_LIMITS.maxChars) {
    reject({
      reason: 'too_large',
      detail: `the annotation is longer than ${STASH_LIMITS.maxChars} characters`,
    });
    return {};
  }
  const signature = Object.hasOwn(annotations, CONVERSION_MAC_ANNOTATION)
    ? annotations[CONVERSION_MAC_ANNOTATION]
    : undefined;
  const uid = typeof metadata.uid === 'string' ? metadata.uid : '';
  const untrusted = distrust(key, uid, text, typeof signature === 'string' ? signature : undefined);
  if (untrusted !== undefined) {
    reject({ reason: untrusted, detail: `${CONVERSION_MAC_ANNOTATION} does not vouch for the stash` });
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    reject({ reason: 'malformed', detail: 'the annotation is not JSON' });
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    reject({ reason: 'malformed', detail: 'the annotation is not a JSON object' });
    return {};
  }
  const stash: Stash = {};
  let count = 0;
  for (const [version, list] of Object.entries(parsed)) {
    if (!VERSIONS.includes(version as VersionName)) {
      reject({ reason: 'malformed', detail: 'a key is not a version' });
      return {};
    }
    const entries = entriesOf(list);
    if (!Array.isArray(entries)) {
      reject(entries);
      return {};
    }
    count += entries.length;
    if (count > STASH_LIMITS.maxEntries) {
      reject({ reason: 'too_large', detail: `more than ${STASH_LIMITS.maxEntries} entries` });
      return {};
    }
    stash[version as VersionName] = entries;
  }
  return stash;
}

/**
 * Writes `stash` into `annotations` (a new object) with its MAC under `key` for an object
 * with `uid`; removes both annotations when the stash is empty (no key needed). Throws
 * StashKeyMissingError when the stash is not empty and `key` is undefined.
 */
export function writeStash(
  annotations: Readonly<Record<string, string>>,
  stash: Stash,
  key: Uint8Array | undefined,
  uid: string,
): Record<string, string> {
  const out = { ...annotations };
  if (Object.keys(stash).length === 0) {
    Reflect.deleteProperty(out, CONVERSION_ANNOTATION);
    Reflect.deleteProperty(out, CONVERSION_MAC_ANNOTATION);
    return out;
  }
  const text = JSON.stringify(stash);
  out[CONVERSION_ANNOTATION] = text;
  out[CONVERSION_MAC_ANNOTATION] = signStash(key, uid, text);
  return out;
}

/** The schemas of spec and status of one version. */
export interface BodySchema {
  readonly spec: JSONSchemaProps;
  readonly status: JSONSchemaProps;
}

/**
 * `body` (not changed) without each optional field whose value breaks `schema` (the
 * field, or the list holding the value), so a mapping's output keeps the target version's
 * bounds: a v1alpha1 phase v1 and v2 do not know, say. What is dropped is not lost: the
 * stash carries it back to the version that holds it.
 */
export function fitBounds(body: Body, schema: BodySchema): Body {
  let out = body;
  const found = [
    ...violations(schema.spec, body.spec).map((v) => ['spec', v] as const),
    ...(body.status === undefined
      ? []
      : violations(schema.status, body.status).map((v) => ['status', v] as const)),
  ];
  for (const [root, v] of found) {
    if (v.remove === undefined) continue;
    const p = [root, ...v.remove];
    const current = getPath(out, p);
    if (current !== undefined) out = withEntry(out, { p, b: current as Json });
  }
  return out;
}

/**
 * The violations an entry at `path` can cause in `body`: of the field of spec or status the
 * path is under (or of all of spec or status for a path of one segment), including that
 * field being undeclared, or absent though required.
 */
function violationsAround(schema: BodySchema, body: Body, path: readonly string[]): Set<string> {
  const root = path[0] === 'spec' ? 'spec' : 'status';
  const field = path[1];
  const rootSchema = schema[root];
  const value = getPath(body, field === undefined ? [root] : [root, field]);
  const where = field === undefined ? root : `${root}.${field}`;
  const props = rootSchema.properties ?? {};
  const fieldSchema =
    field === undefined ? rootSchema : Object.hasOwn(props, field) ? props[field] : undefined;
  let found: Violation[];
  if (value === undefined) {
    const required = field === undefined ? root === 'spec' : (rootSchema.required ?? []).includes(field);
    found = required ? [{ path: where, why: 'required' }] : [];
  } else if (fieldSchema === undefined) found = [{ path: where, why: 'not declared' }];
  else found = violations(fieldSchema, value, where);
  return new Set(found.map((v) => `${v.path}: ${v.why}`));
}

/** `entries` cut into runs of consecutive entries under the same field of spec or status. */
function fieldRuns(entries: readonly DiffEntry[]): DiffEntry[][] {
  const runs: DiffEntry[][] = [];
  let last: DiffEntry | undefined;
  for (const e of entries) {
    const run = runs[runs.length - 1];
    if (run !== undefined && last !== undefined && e.p[0] === last.p[0] && e.p[1] === last.p[1]) run.push(e);
    else runs.push([e]);
    last = e;
  }
  return runs;
}

/** The violations around `path` that `next` has and `current` does not (violationsAround). */
function addedViolations(schema: BodySchema, current: Body, next: Body, path: readonly string[]): string[] {
  const before = violationsAround(schema, current, path);
  return [...violationsAround(schema, next, path)].filter((v) => !before.has(v));
}

/**
 * `base` (not changed) with `entries` applied in order, each guarded as withEntry does, and
 * checked against `schema` (spec and status of the target version) one field of spec or
 * status at a time: the entries under one field (a run of consecutive entries) are applied
 * together when the field then has no violation it did not have before, so a rule over
 * several of its properties (a target's kind needs its apiVersion) holds of the field as a
 * whole. Otherwise the run's entries are tried one at a time, and each after which the field
 * has a new violation is skipped and reported as out_of_bounds.
 */
export function applyStash(
  base: Body,
  entries: readonly DiffEntry[],
  schema: BodySchema,
  reject: RejectionSink,
): Body {
  let current = base;
  for (const run of fieldRuns(entries)) {
    const path = (run[0] as DiffEntry).p;
    const together = run.reduce((body, e) => withEntry(body, e), current);
    if (together === current) continue;
    if (addedViolations(schema, current, together, path).length === 0) {
      current = together;
      continue;
    }
    for (const e of run) {
      const next = withEntry(current, e);
      if (next === current) continue;
      const added = addedViolations(schema, current, next, e.p);
      if (added.length > 0) reject({ reason: 'out_of_bounds', detail: added.slice(0, 3).join('; ') });
      else current = next;
    }
  }
  return current;
}
