// What the operator's caches keep of an object (the informer's transform, as
// controller-runtime's cache TransformFunc): only the fields the operator reads. Everything
// else a writer can put on an object (annotations such as kubectl's
// last-applied-configuration or a tenant's 250 KiB blob, labels, managedFields, a
// target's pod template) is dropped before the object enters a cache, so the cache's
// size follows what the operator needs, not what tenants write. An object that still costs
// the heap more than MAX_OBJECT_CHARGE after trimming is not cached at all (informer.ts
// refuses it, memory-ledger.ts), nor is a target whose selector is larger than any real one
// (selectorRefusal). The keys of what is kept are the field names in METADATA_KEYS and
// WORKLOAD_KEYS, shared by every cached object (heap-charge.ts charges them so). Pods and
// ReplicaSets read for one evaluation are trimmed the same way before they are kept
// (trimPod, trimReplicaSet). The page budgets of the caches live here too, but for
// the target caches', which are per kind (target-kinds.ts).
// Pure: objects in, new objects out; the input is not changed.

import { APISERVER_MAX_OBJECT_BYTES, pageSizeFor } from '../../lib/kube/resources.ts';
import type { ObjectMeta } from '../../api/schema/common.ts';
import type { TargetKind } from '../../api/schema/v2.ts';
import type { LabelSelector, Pod, Workload } from './kinds.ts';

export { APISERVER_MAX_OBJECT_BYTES, pageSizeFor };

/**
 * Most JSON one page of the AITask cache's LIST may carry: 16 MiB. A page is read whole
 * before it is parsed, so its text and its parsed objects are alive at once: about three
 * times the text for real objects, up to ~90 MiB when it is all short strings (a heap string
 * and its slot cost ~4.6 times their JSON), of the operator's ~259 MiB V8 heap (what Node 24
 * derives under the shipped 384 Mi limit), at its first list too; the caches' ledger
 * (memory-ledger.ts) leaves room for it.
 */
export const TASK_PAGE_BYTES = 16 * 1024 * 1024;

/**
 * AITasks per page of the AITask cache's LIST: 10, pageSizeFor(TASK_PAGE_BYTES), so a page
 * of AITasks each as large as the apiserver stores (APISERVER_MAX_OBJECT_BYTES: the CRD
 * bounds every spec and status field, but metadata and 32 conditions of 32,768 characters
 * still add up past it, so only the store's limit bounds the whole object) stays within
 * TASK_PAGE_BYTES. Costs one request per 10 AITasks: 10,000 AITasks take 1,000 list
 * requests at start (and at a relist).
 */
export const TASK_PAGE_SIZE = pageSizeFor(TASK_PAGE_BYTES);

/**
 * Most terms a target's selector may have to be cached: 32 (each matchLabels entry, each
 * matchExpressions entry and each of its values count one). Real selectors have one to
 * five labels (`app`, or Helm's app.kubernetes.io/name, instance, component); a selector is
 * also the label selector of every pod list for its target, so its size is a query's.
 */
export const MAX_SELECTOR_TERMS = 32;

/**
 * Most bytes a target's selector may take as a label selector string (selectorString): 4
 * KiB, room for ten terms of the longest key (317 bytes: a 253-byte prefix, `/`, 63 bytes)
 * with a 63-byte value, and a URL far under any server's limit.
 */
export const MAX_SELECTOR_BYTES = 4096;

/** Most pods of one target considered when choosing one to act on: 1,000. */
export const MAX_PODS_CONSIDERED = 1000;

/**
 * Most JSON one page of a target's pods (or ReplicaSets) may carry: 16 MiB, so
 * pageSizeFor gives 10 objects a page; each page is trimmed and dropped before the next.
 */
export const POD_PAGE_BYTES = 16 * 1024 * 1024;

/** The keys of trimMetadata's result (annotations' keys aside): shared by every cached object. */
export const METADATA_KEYS: readonly string[] = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'finalizers',
  'annotations',
];

/** The keys of a custom resource as trimCustomObject keeps it (its spec's and status's aside). */
export const CUSTOM_OBJECT_KEYS: readonly string[] = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];

/** The keys of trimWorkload's result (the selector's matchLabels keys aside, which tenants choose). */
export const WORKLOAD_KEYS: ReadonlySet<string> = new Set([
  ...METADATA_KEYS,
  'kind',
  'metadata',
  'spec',
  'status',
  'replicas',
  'selector',
  'matchLabels',
  'matchExpressions',
  'key',
  'operator',
  'values',
  'readyReplicas',
  'availableReplicas',
]);

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
 * Why `selector` is refused (too many terms or bytes for any real workload), or undefined
 * when it is within MAX_SELECTOR_TERMS and MAX_SELECTOR_BYTES. Counts without rendering, so
 * a huge selector costs one pass over it.
 */
export function selectorRefusal(selector: LabelSelector | undefined): string | undefined {
  let terms = 0;
  let bytes = 0;
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) {
    terms++;
    bytes += Buffer.byteLength(k) + Buffer.byteLength(v) + 2;
  }
  for (const e of selector?.matchExpressions ?? []) {
    terms += 1 + (e.values?.length ?? 0);
    bytes += Buffer.byteLength(e.key) + 12;
    for (const v of e.values ?? []) bytes += Buffer.byteLength(v) + 1;
  }
  if (terms > MAX_SELECTOR_TERMS)
    return `its selector has ${terms} terms, more than the ${MAX_SELECTOR_TERMS} the operator reads`;
  if (bytes > MAX_SELECTOR_BYTES)
    return `its selector takes ${bytes} bytes, more than the ${MAX_SELECTOR_BYTES} the operator reads`;
  return undefined;
}

/**
 * The transform of the target cache of `kind` (a Deployment's or a StatefulSet's): the kind,
 * trimmed metadata without annotations, `spec.replicas` and `spec.selector` (decide, scale,
 * the pod listing), and `status.readyReplicas` / `availableReplicas` (the LLM advisor's
 * context). The pod template and everything else are dropped.
 */
export function trimWorkload(kind: TargetKind): (w: Workload) => Workload {
  return (w) => {
    const { replicas, selector } = w.spec ?? {};
    const { readyReplicas, availableReplicas } = w.status ?? {};
    return {
      kind,
      metadata: trimMetadata(w.metadata),
      spec: { ...(replicas !== undefined ? { replicas } : {}), ...(selector ? { selector } : {}) },
      status: {
        ...(readyReplicas !== undefined ? { readyReplicas } : {}),
        ...(availableReplicas !== undefined ? { availableReplicas } : {}),
      },
    };
  };
}

/**
 * A pod as choosing one to act on reads it (pod-choice.ts): name, namespace, uid, age and
 * deletion, its controller reference only (apiVersion, kind, name and uid: ownership, and
 * the owner to read next on a chain, edges/owner-chain.ts), the node, the phase, the
 * Ready condition and the restarts of all its containers added up. Everything else (the
 * spec's containers and env, labels, annotations, other conditions) is dropped.
 */
export function trimPod(p: Pod): Pod {
  const m = p.metadata;
  const controller = (m.ownerReferences ?? []).find((r) => r.controller === true);
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  const restarts = (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const meta: ObjectMeta = {};
  if (m.name !== undefined) meta.name = m.name;
  if (m.namespace !== undefined) meta.namespace = m.namespace;
  if (m.uid !== undefined) meta.uid = m.uid;
  if (m.creationTimestamp !== undefined) meta.creationTimestamp = m.creationTimestamp;
  if (m.deletionTimestamp !== undefined) meta.deletionTimestamp = m.deletionTimestamp;
  if (controller !== undefined)
    meta.ownerReferences = [
      {
        apiVersion: controller.apiVersion,
        kind: controller.kind,
        name: controller.name,
        uid: controller.uid,
        controller: true,
      },
    ];
  const nodeName = p.spec?.nodeName;
  const phase = p.status?.phase;
  return {
    metadata: meta,
    ...(nodeName !== undefined ? { spec: { nodeName } } : {}),
    status: {
      ...(phase !== undefined ? { phase } : {}),
      ...(ready !== undefined ? { conditions: [{ type: 'Ready', status: ready.status }] } : {}),
      ...(restarts > 0 ? { containerStatuses: [{ restartCount: restarts }] } : {}),
    },
  };
}

/** A ReplicaSet as ownership reads it (pod-choice.ts): its uid and controller reference (kind and uid). */
export function trimReplicaSet(rs: { metadata: ObjectMeta }): { metadata: ObjectMeta } {
  const m = rs.metadata;
  const controller = (m.ownerReferences ?? []).find((r) => r.controller === true);
  return {
    metadata: {
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(controller !== undefined
        ? {
            ownerReferences: [
              { apiVersion: '', kind: controller.kind, name: '', uid: controller.uid, controller: true },
            ],
          }
        : {}),
    },
  };
}
