// Lossless AITask conversion, hub-and-spoke with v2 as the hub. Each spoke has a plain
// field mapping (v1alpha1.ts, v1.ts); what a mapping cannot carry is recorded as a
// guarded diff in the annotation `aiops.example.com/conversion-data`, keyed by the
// version that holds the data, and replayed on the way back unless the user has since
// changed that field. Pure: no I/O, no clock, no randomness.

import { CONVERSION_ANNOTATION } from '../install.ts';
import { GROUP, KIND, type ObjectMeta } from '../schema/common.ts';
import { HUB_VERSION, VERSIONS, type VersionName } from '../crd.ts';
import type { Body } from './body.ts';
import { ConversionError } from './errors.ts';
import { applyDiff, diff, isDiffEntries, type DiffEntry } from './json-diff.ts';
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
const MAPPINGS: Record<Spoke, { lift: (b: Body) => Body; project: (b: Body) => Body }> = {
  v1alpha1: { lift: liftV1alpha1, project: projectV1alpha1 },
  v1: { lift: liftV1, project: projectV1 },
};

type Stash = Partial<Record<VersionName, DiffEntry[]>>;

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
 * new object; metadata is unchanged except the conversion annotation. Throws
 * ConversionError naming the field when the object is not a convertible AITask.
 */
export function convert(input: unknown, desiredAPIVersion: string): LooseAITask {
  const obj = checkShape(input);
  const from = versionOf(obj.apiVersion);
  const to = versionOf(desiredAPIVersion);
  if (from === to) return obj;
  const hub = from === HUB_VERSION ? obj : toHub(obj, from);
  return to === HUB_VERSION ? hub : fromHub(hub, to);
}

function toHub(spoke: LooseAITask, version: Spoke): LooseAITask {
  const map = MAPPINGS[version];
  const stash = readStash(spoke.metadata);
  const spokeBody = bodyOf(spoke);
  const hubBody = applyDiff(map.lift(spokeBody), stash.v2 ?? [], true);
  const spokeEntries = diff(map.project(hubBody), spokeBody);
  const next: Stash = { ...stash };
  Reflect.deleteProperty(next, 'v2');
  if (spokeEntries.length > 0) next[version] = spokeEntries;
  else Reflect.deleteProperty(next, version);
  return assemble(spoke, HUB_VERSION, hubBody, next);
}

function fromHub(hub: LooseAITask, version: Spoke): LooseAITask {
  const map = MAPPINGS[version];
  const stash = readStash(hub.metadata);
  const hubBody = bodyOf(hub);
  const spokeBody = applyDiff(map.project(hubBody), stash[version] ?? [], true);
  const hubEntries = diff(map.lift(spokeBody), hubBody);
  const next: Stash = { ...stash };
  Reflect.deleteProperty(next, version);
  if (hubEntries.length > 0) next.v2 = hubEntries;
  else Reflect.deleteProperty(next, 'v2');
  return assemble(hub, version, spokeBody, next);
}

function bodyOf(o: LooseAITask): Body {
  const b: Body = { spec: structuredClone(o.spec) };
  if (o.status !== undefined) b.status = structuredClone(o.status);
  return b;
}

function assemble(src: LooseAITask, version: VersionName, b: Body, stash: Stash): LooseAITask {
  const metadata = structuredClone(src.metadata);
  const annotations = { ...metadata.annotations };
  if (Object.keys(stash).length > 0) annotations[CONVERSION_ANNOTATION] = JSON.stringify(stash);
  else Reflect.deleteProperty(annotations, CONVERSION_ANNOTATION);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const out: LooseAITask = { apiVersion: `${GROUP}/${version}`, kind: KIND, metadata, spec: b.spec };
  if (b.status !== undefined) out.status = b.status;
  return out;
}

function readStash(metadata: ObjectMeta): Stash {
  const raw = metadata.annotations?.[CONVERSION_ANNOTATION];
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConversionError(
      `annotation ${CONVERSION_ANNOTATION} is not valid JSON; remove it or restore the value the server wrote`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConversionError(`annotation ${CONVERSION_ANNOTATION} must be a JSON object keyed by version`);
  }
  const stash: Stash = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!VERSIONS.includes(k as VersionName) || !isDiffEntries(v)) {
      throw new ConversionError(`annotation ${CONVERSION_ANNOTATION} has an invalid entry "${k}"`);
    }
    stash[k as VersionName] = v;
  }
  return stash;
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
