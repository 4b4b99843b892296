// Lossless AITask conversion, hub-and-spoke with v2 as the hub. Each spoke has a plain
// field mapping (v1alpha1.ts, v1.ts); what a mapping cannot carry is recorded as a
// guarded diff in the annotation `aiops.example.com/conversion-data`, keyed by the
// version that holds the data, signed with the caller's key, and replayed on the way
// back unless the user has since changed that field. A stash the key does not vouch for,
// or any part of it outside the target version's bounds, is ignored (stash.ts). Without a
// key (its host has not loaded it yet) an object converts as long as no stash has to be
// written or verified; else StashKeyMissingError. Pure: no I/O, no clock, no randomness.
//
// Its work is bounded by what a valid object can hold, whatever it is sent: an object with
// more values in spec and status than any valid object of its version (or more in metadata
// than METADATA_MAX_VALUES, or nested deeper than MAX_DEPTH) is refused before anything is
// copied or walked. Every object it produces at v2 is checked against v2's schema bounds and
// CEL rules, the rules the apiserver holds a v2 write to; one that breaks them is refused.

import { GROUP, KIND, type ObjectMeta } from '../schema/common.ts';
import { HUB_VERSION, objectSchema, VERSIONS, type VersionName } from '../crd.ts';
import type { Body } from './body.ts';
import { maxValues, MORE_VIOLATIONS, overBudget, violations, type Violation } from './bounds.ts';
import { ConversionError } from './errors.ts';
import { diff } from './json-diff.ts';
import {
  applyStash,
  fitBounds,
  readStash,
  writeStash,
  type BodySchema,
  type RejectionSink,
  type Stash,
} from './stash.ts';
import { liftV1, projectV1 } from './v1.ts';
import { liftV1alpha1, projectV1alpha1 } from './v1alpha1.ts';

/** An AITask at any version, as loose JSON. */
export interface LooseAITask {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

type Spoke = Exclude<VersionName, 'v2'>;
/** spec and status schemas of each version, for the bounds conversion output keeps. */
const SCHEMAS = Object.fromEntries(
  VERSIONS.map((v) => {
    const props = objectSchema(v).properties ?? {};
    return [v, { spec: props['spec'] ?? {}, status: props['status'] ?? {} }];
  }),
) as Record<VersionName, BodySchema>;

/**
 * Most values (objects, lists and scalars) an object's metadata may hold: 65,536. The
 * apiserver's own metadata of one object (labels, annotations within 256 KiB, managedFields
 * listing each field set, a set of 5,000 cordoned nodes included) holds a few thousand.
 */
export const METADATA_MAX_VALUES = 65_536;

/**
 * Deepest nesting of an object converted: 32 levels. The schemas are at most 6 deep and the
 * apiserver's managedFields mirror them.
 */
export const MAX_DEPTH = 32;

/**
 * Most values in `{ spec, status }` of an object at each version: what a valid object can hold
 * at most (every list at its maxItems), from the schema itself.
 */
export const BODY_MAX_VALUES = Object.fromEntries(
  VERSIONS.map((v) => [
    v,
    maxValues({ type: 'object', properties: { spec: SCHEMAS[v].spec, status: SCHEMAS[v].status } }),
  ]),
) as Record<VersionName, number>;

/** Violations a refusal quotes: 3, then how many more. */
const QUOTED_VIOLATIONS = 3;

/** Each spoke's mapping, its output fitted to the target version's bounds (fitBounds). */
const MAPPINGS: Record<Spoke, { lift: (b: Body) => Body; project: (b: Body) => Body }> = {
  v1alpha1: {
    lift: (b) => fitBounds(liftV1alpha1(b), SCHEMAS.v2),
    project: (b) => fitBounds(projectV1alpha1(b), SCHEMAS.v1alpha1),
  },
  v1: {
    lift: (b) => fitBounds(liftV1(b), SCHEMAS.v2),
    project: (b) => fitBounds(projectV1(b), SCHEMAS.v1),
  },
};

/** What conversion needs besides the object. */
export interface ConvertOptions {
  /**
   * HMAC-SHA256 key that signs the stash written and verifies the stash read (the
   * operator's, data key `conversion-key` of the Secret `aiops-webhook-service-cert`; at
   * least MIN_KEY_BYTES). Undefined: no key yet; converting an object then throws
   * StashKeyMissingError when it would write a stash or verify one (readStash).
   */
  readonly key: Uint8Array | undefined;
  /** Called for each stash or stash entry ignored, with the reason (default: nothing). */
  readonly onStashRejected?: RejectionSink;
}

const ignore: RejectionSink = () => undefined;

/** The version part of an `aiops.example.com/<version>` apiVersion, or throws ConversionError. */
export function versionOf(apiVersion: string): VersionName {
  const [group, version] = apiVersion.split('/');
  if (group !== GROUP || !VERSIONS.includes(version as VersionName)) {
    throw new ConversionError(
      `unsupported apiVersion "${apiVersion}"; expected ${VERSIONS.map((v) => `${GROUP}/${v}`).join(', ')}`,
    );
  }
  return version as VersionName;
}

/**
 * Converts `input` (an AITask at any served version) to `desiredAPIVersion`. Returns a
 * new object; metadata is unchanged except the conversion annotations. Throws
 * ConversionError naming the field when the object is not a convertible AITask (fault
 * `input`: not an AITask, over the budgets above, a required field missing), or when the
 * object it would produce at v2 breaks v2's bounds or rules (fault `output` when the object
 * sent is within its own version's bounds and rules, else `input`); a bad stash never
 * throws (it is ignored and reported to `options.onStashRejected`). Throws
 * StashKeyMissingError when `options.key` is undefined and a stash must be written or verified.
 */
export function convert(input: unknown, desiredAPIVersion: string, options: ConvertOptions): LooseAITask {
  const obj = checkShape(input);
  const from = versionOf(obj.apiVersion);
  const to = versionOf(desiredAPIVersion);
  checkBudget(obj, from);
  if (from === to) return obj;
  const reject = options.onStashRejected ?? ignore;
  const hub = from === HUB_VERSION ? obj : toHub(obj, from, options.key, reject);
  if (to !== HUB_VERSION) return fromHub(hub, to, options.key, reject);
  checkOutput(obj, from, hub);
  return hub;
}

/** Throws ConversionError (fault input) when `obj` is over the budgets of an object at `version`. */
function checkBudget(obj: LooseAITask, version: VersionName): void {
  const meta = overBudget(obj.metadata, METADATA_MAX_VALUES, MAX_DEPTH);
  if (meta !== undefined) throw new ConversionError(`metadata ${meta}; an AITask's metadata holds far fewer`);
  const body = overBudget(bodyOf(obj, false), BODY_MAX_VALUES[version], MAX_DEPTH);
  if (body !== undefined)
    throw new ConversionError(
      `spec and status ${body}, past any valid AITask at ${version} (${BODY_MAX_VALUES[version]} values with every list at its maxItems, ${MAX_DEPTH} levels deep)`,
    );
}

/** The violations of `version`'s spec and status schemas (bounds and rules) in `obj`, capped. */
function violationsAt(version: VersionName, obj: LooseAITask, max?: number): Violation[] {
  return [
    ...violations(SCHEMAS[version].spec, obj.spec, 'spec', max),
    ...(obj.status === undefined ? [] : violations(SCHEMAS[version].status, obj.status, 'status', max)),
  ];
}

/**
 * Throws ConversionError when `out` (produced at v2 from `src` at `from`) breaks v2's bounds or
 * rules: fault output when `src` keeps its own version's, else input.
 */
function checkOutput(src: LooseAITask, from: VersionName, out: LooseAITask): void {
  const found = violationsAt(HUB_VERSION, out);
  if (found.length === 0) return;
  const more = found.some((v) => v.why === MORE_VIOLATIONS);
  const listed = found.filter((v) => v.why !== MORE_VIOLATIONS);
  const quoted = listed.slice(0, QUOTED_VIOLATIONS).map((v) => `${v.path}: ${v.why}`);
  const rest = listed.length - quoted.length;
  const tail = rest > 0 || more ? `; and ${more ? 'more' : `${rest} more`}` : '';
  const fault = violationsAt(from, src, 1).length === 0 ? 'output' : 'input';
  throw new ConversionError(
    `the object at ${HUB_VERSION} would break the rules a ${HUB_VERSION} write is held to: ${quoted.join('; ')}${tail}`,
    fault,
  );
}

function toHub(
  spoke: LooseAITask,
  version: Spoke,
  key: Uint8Array | undefined,
  reject: RejectionSink,
): LooseAITask {
  const map = MAPPINGS[version];
  const stash = readStash(spoke.metadata, key, reject);
  const spokeBody = bodyOf(spoke);
  const hubBody = applyStash(map.lift(spokeBody), stash.v2 ?? [], SCHEMAS[HUB_VERSION], reject);
  const spokeEntries = diff(map.project(hubBody), spokeBody);
  const next: Stash = { ...stash };
  Reflect.deleteProperty(next, 'v2');
  if (spokeEntries.length > 0) next[version] = spokeEntries;
  else Reflect.deleteProperty(next, version);
  return assemble(spoke, HUB_VERSION, hubBody, next, key);
}

function fromHub(
  hub: LooseAITask,
  version: Spoke,
  key: Uint8Array | undefined,
  reject: RejectionSink,
): LooseAITask {
  const map = MAPPINGS[version];
  const stash = readStash(hub.metadata, key, reject);
  const hubBody = bodyOf(hub);
  const spokeBody = applyStash(map.project(hubBody), stash[version] ?? [], SCHEMAS[version], reject);
  const hubEntries = diff(map.lift(spokeBody), hubBody);
  const next: Stash = { ...stash };
  Reflect.deleteProperty(next, version);
  if (hubEntries.length > 0) next.v2 = hubEntries;
  else Reflect.deleteProperty(next, 'v2');
  return assemble(hub, version, spokeBody, next, key);
}

/** `o`'s spec and status, copied unless `copy` is false (default true). */
function bodyOf(o: LooseAITask, copy = true): Body {
  const b: Body = { spec: copy ? structuredClone(o.spec) : o.spec };
  if (o.status !== undefined) b.status = copy ? structuredClone(o.status) : o.status;
  return b;
}

function assemble(
  src: LooseAITask,
  version: VersionName,
  b: Body,
  stash: Stash,
  key: Uint8Array | undefined,
): LooseAITask {
  const metadata = structuredClone(src.metadata);
  const uid = typeof metadata.uid === 'string' ? metadata.uid : '';
  const annotations = writeStash(metadata.annotations ?? {}, stash, key, uid);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const out: LooseAITask = { apiVersion: `${GROUP}/${version}`, kind: KIND, metadata, spec: b.spec };
  if (b.status !== undefined) out.status = b.status;
  return out;
}

function checkShape(input: unknown): LooseAITask {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ConversionError('object must be a JSON object');
  const o = input as Record<string, unknown>;
  if (o['kind'] !== KIND)
    throw new ConversionError(`kind must be ${KIND}, got ${JSON.stringify(o['kind'] ?? null)}`);
  if (typeof o['apiVersion'] !== 'string') throw new ConversionError('apiVersion must be a string');
  const meta = o['metadata'];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    throw new ConversionError('metadata must be an object');
  const spec = o['spec'];
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new ConversionError('spec must be an object');
  const status = o['status'];
  if (status !== undefined && (typeof status !== 'object' || status === null || Array.isArray(status))) {
    throw new ConversionError('status must be an object');
  }
  return input as LooseAITask;
}
