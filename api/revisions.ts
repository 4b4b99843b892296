// The spec history of an AITask as apps/v1 ControllerRevisions: the operator writes one per
// observed generation, `kubectl aiops generation-diff` reads them. Both sides use these
// pure helpers, so the format is defined once.
//
// Format of one revision (namespace = the AITask's):
//   metadata.name         `<aitask name, cut to 200 chars>-g<generation>`
//   metadata.labels       `aiops.example.com/aitask-uid: <AITask uid>` (select a task's history),
//                         `aiops.example.com/generation: "<generation>"`
//   metadata.annotations  `aiops.example.com/generation: "<generation>"`, `aiops.example.com/aitask: <name>`
//   metadata.ownerReferences  the AITask (controller: true), so history goes with the task
//   revision              the generation (int64)
//   data                  the v2 `spec` exactly as observed at that generation

import type { ObjectMeta } from './schema/common.ts';
import type * as v2 from './schema/v2.ts';

/** Label selecting every revision of one AITask (value: its uid). */
export const REVISION_UID_LABEL = 'aiops.example.com/aitask-uid';
/** Label and annotation holding the generation a revision records. */
export const REVISION_GENERATION_KEY = 'aiops.example.com/generation';
/** Annotation with the AITask's name (names may exceed a label value's 63 characters). */
export const REVISION_TASK_ANNOTATION = 'aiops.example.com/aitask';
/** Revisions kept per AITask by default; older ones are deleted. */
export const DEFAULT_REVISION_LIMIT = 10;

/** apps/v1 ControllerRevision with `data` typed as a v2 spec. */
export interface ControllerRevision {
  apiVersion: 'apps/v1';
  kind: 'ControllerRevision';
  metadata: ObjectMeta;
  data: v2.Spec;
  revision: number;
}

/** One kept generation of an AITask's spec. */
export interface SpecRevision {
  generation: number;
  spec: v2.Spec;
  name: string;
}

/** Name of the revision holding `generation` of the AITask `taskName`. */
export function revisionName(taskName: string, generation: number): string {
  return `${taskName.slice(0, 200).replace(/[.-]+$/, '')}-g${generation}`;
}

/** The label selector of an AITask's revisions. */
export function revisionSelector(uid: string): string {
  return `${REVISION_UID_LABEL}=${uid}`;
}

/** Builds the revision recording `task`'s current spec; throws if the task lacks name, uid or generation. */
export function buildRevision(
  task: Pick<v2.AITask, 'apiVersion' | 'kind' | 'metadata' | 'spec'>,
): ControllerRevision {
  const { name, namespace, uid, generation } = task.metadata;
  if (name === undefined || uid === undefined || generation === undefined)
    throw new Error('an AITask needs metadata.name, uid and generation to record a revision');
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(name, generation),
      ...(namespace !== undefined ? { namespace } : {}),
      labels: { [REVISION_UID_LABEL]: uid, [REVISION_GENERATION_KEY]: String(generation) },
      annotations: { [REVISION_GENERATION_KEY]: String(generation), [REVISION_TASK_ANNOTATION]: name },
      ownerReferences: [
        {
          apiVersion: task.apiVersion,
          kind: task.kind,
          name,
          uid,
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
    },
    data: task.spec,
    revision: generation,
  };
}

/** Reads a revision back; undefined when it does not carry a valid generation. */
export function parseRevision(
  cr: Pick<ControllerRevision, 'metadata' | 'data' | 'revision'>,
): SpecRevision | undefined {
  const raw =
    cr.metadata.annotations?.[REVISION_GENERATION_KEY] ?? cr.metadata.labels?.[REVISION_GENERATION_KEY];
  const generation = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : cr.revision;
  if (!Number.isSafeInteger(generation) || generation < 1) return undefined;
  return { generation, spec: cr.data, name: cr.metadata.name ?? '' };
}

/** Revisions sorted by generation, newest first (unparseable ones dropped). */
export function sortRevisions(
  list: readonly Pick<ControllerRevision, 'metadata' | 'data' | 'revision'>[],
): SpecRevision[] {
  return list
    .map(parseRevision)
    .filter((r): r is SpecRevision => r !== undefined)
    .sort((a, b) => b.generation - a.generation);
}

/** Names of the revisions beyond the newest `keep` (default 10), to delete. */
export function revisionsToPrune(
  list: readonly Pick<ControllerRevision, 'metadata' | 'data' | 'revision'>[],
  keep: number = DEFAULT_REVISION_LIMIT,
): string[] {
  return sortRevisions(list)
    .slice(keep)
    .map((r) => r.name);
}
