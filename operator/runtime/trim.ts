// What the operator's caches keep of an object (the informer's transform, as
// controller-runtime's cache TransformFunc): only the fields the operator reads. Everything
// else a writer can put on an object (annotations such as kubectl's
// last-applied-configuration or a tenant's 250 KiB blob, labels, managedFields, a
// Deployment's pod template) is dropped before the object enters a cache, so the cache's
// size follows what the operator needs, not what tenants write. An object still larger than
// MAX_CACHED_OBJECT_BYTES after trimming is not cached at all (informer.ts refuses it).
// Pure: objects in, new objects out; the input is not changed.

import type { ObjectMeta } from '../../api/schema/common.ts';
import type { Deployment } from './kinds.ts';

/**
 * Largest trimmed object a cache holds, in bytes of its JSON (UTF-8): 64 KiB. A trimmed
 * AITask is its spec (the schema bounds every string in it: at most ~41 KiB with every
 * character JSON-escaped to 6 bytes, ~7 KiB unescaped; operator/cache-trim.test.ts derives
 * both from the schema), its status as the operator writes it (seven condition types whose
 * messages are a sentence each, quoting at most the task's own query or names), and a few
 * hundred bytes of metadata. Only an object whose status or approval annotation someone made
 * huge passes it; it is refused rather than cached (informer.ts), so one tenant's objects
 * cannot grow the operator past its memory limit. A refused AITask is not reconciled (nor
 * finalized) until it shrinks; its refusal is logged and counted.
 */
export const MAX_CACHED_OBJECT_BYTES = 64 * 1024;

/**
 * The largest object a default cluster stores, in bytes of JSON: 1.5 MiB, etcd's default
 * `--max-request-bytes` (custom resources are stored as JSON, and read back as about the
 * same text). What bounds one AITask on the wire: the CRD bounds every spec and status field
 * (api/crd-bounds.test.ts), but metadata (labels, finalizers, managedFields, 256 KiB of
 * annotations) and 32 conditions of 32,768 characters each still add up past it, so only
 * the store's limit bounds the whole object. A cluster whose etcd allows more allows larger pages.
 */
export const APISERVER_MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

/**
 * Most JSON one page of the AITask cache's LIST may carry: 16 MiB. A page is read whole
 * before it is parsed, so its text, its parsed objects and each object's size check are
 * alive at once (about three times the text): at most ~50 MiB of the operator's
 * 288 MiB heap bound (three quarters of the shipped 384 Mi limit), at its first list too.
 */
export const TASK_PAGE_BYTES = 16 * 1024 * 1024;

/**
 * AITasks per page of the AITask cache's LIST (Deployments keep the informer's 500): 10,
 * TASK_PAGE_BYTES over APISERVER_MAX_OBJECT_BYTES, so a page of AITasks each as large as the
 * apiserver stores stays within TASK_PAGE_BYTES. Before this bound a page of 100 tasks with
 * a 1.3 MB status each took the operator to 565 MiB at start (issue 30, attack 2). Costs one
 * request per 10 AITasks: 10,000 AITasks take 1,000 list requests at start (and at a relist).
 */
export const TASK_PAGE_SIZE = Math.floor(TASK_PAGE_BYTES / APISERVER_MAX_OBJECT_BYTES);

/**
 * Environment variable that, set to `off`, caches AITasks as before this transform (only
 * managedFields and last-applied-configuration dropped, no size bound): the baseline of
 * `npm run bench -- memory`. Unset in every deployment.
 */
export const CACHE_TRIM_ENV = 'AIOPS_CACHE_TRIM';

/** Size of `obj` as JSON text, in UTF-8 bytes: what the cache-size metric adds up. */
export function jsonBytes(obj: unknown): number {
  return Buffer.byteLength(JSON.stringify(obj));
}

/**
 * The metadata fields the operator reads (identity, resourceVersion, generation, age,
 * deletion, finalizers), with only the annotations named in `keep`. Labels, owner references
 * and managedFields are dropped.
 */
export function trimMetadata(meta: ObjectMeta, keep: readonly string[] = []): ObjectMeta {
  const out: ObjectMeta = {};
  if (meta.name !== undefined) out.name = meta.name;
  if (meta.namespace !== undefined) out.namespace = meta.namespace;
  if (meta.uid !== undefined) out.uid = meta.uid;
  if (meta.resourceVersion !== undefined) out.resourceVersion = meta.resourceVersion;
  if (meta.generation !== undefined) out.generation = meta.generation;
  if (meta.creationTimestamp !== undefined) out.creationTimestamp = meta.creationTimestamp;
  if (meta.deletionTimestamp !== undefined) out.deletionTimestamp = meta.deletionTimestamp;
  if (meta.finalizers !== undefined) out.finalizers = meta.finalizers;
  const annotations = meta.annotations ?? {};
  const kept = keep.filter((k) => Object.hasOwn(annotations, k));
  if (kept.length > 0) out.annotations = Object.fromEntries(kept.map((k) => [k, annotations[k] ?? '']));
  return out;
}

/** The shape of a custom resource: apiVersion, kind, metadata, spec and an optional status. */
export interface CustomObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: unknown;
  status?: unknown;
}

/**
 * The transform of a custom resource's cache (the AITask's: `keep` is the approval
 * annotation, the only one the operator reads; the conversion stash is read by the webhook
 * from the ConversionReview, never from a cache): apiVersion and kind (Events name them),
 * trimMetadata with only the annotations in `keep`, spec and status whole (the reconciler
 * reads both; the schema bounds the spec).
 */
export function trimCustomObject(keep: readonly string[]): <T extends CustomObject>(obj: T) => T {
  return (obj) => {
    const trimmed: CustomObject = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: trimMetadata(obj.metadata, keep),
      spec: obj.spec,
    };
    if (obj.status !== undefined) trimmed.status = obj.status;
    return trimmed as typeof obj;
  };
}

/**
 * A Deployment as the Deployment cache keeps it: trimmed metadata without annotations,
 * `spec.replicas` and `spec.selector` (decide, scale, the pod listing), and
 * `status.readyReplicas` / `availableReplicas` (the LLM advisor's context). The pod template
 * and everything else are dropped.
 */
export function trimDeployment(d: Deployment): Deployment {
  const { replicas, selector } = d.spec ?? {};
  const { readyReplicas, availableReplicas } = d.status ?? {};
  return {
    metadata: trimMetadata(d.metadata),
    spec: { ...(replicas !== undefined ? { replicas } : {}), ...(selector ? { selector } : {}) },
    status: {
      ...(readyReplicas !== undefined ? { readyReplicas } : {}),
      ...(availableReplicas !== undefined ? { availableReplicas } : {}),
    },
  };
}
