// Which pods belong to a target read through /scale (any kind beyond the cached ones): a pod
// is the target's only when its controller chain leads to the target's UID, following the
// owners the pods name (a custom kind → its ReplicaSet → pod, an Argo Rollout's the same)
// as far as MAX_OWNER_HOPS, never by labels alone. Each owner on the way is read once per
// action (a LIST of its kind by metadata.name: the `list` verb the operator holds on
// ReplicaSets, StatefulSets and Deployments, which an admin grants for another owner kind),
// its kind found by discovery; at most MAX_OWNERS_READ of them, so pods naming many owners
// cost bounded requests.

import { isDnsSubdomain, type ObjectMeta } from '../../api/schema/common.ts';
import type { KindDiscovery } from '../../lib/kube/discovery.ts';
import { ForbiddenError } from '../../lib/kube/errors.ts';
import { MAX_OBJECT_JSON_BYTES, resourcePath, type List } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { Pod } from '../runtime/kinds.ts';
import { refusedInput } from '../runtime/terminal.ts';

/** Owners followed between a pod and its target: pod → owner → owner → target at most. */
export const MAX_OWNER_HOPS = 3;
/** Distinct owners read to decide one action's pods. */
export const MAX_OWNERS_READ = 16;
/** Timeout of reading one owner, in ms. */
export const OWNER_READ_TIMEOUT_MS = 10_000;

/** One page of owners, as the chain reads it. */
type OwnerList = List<{ metadata: ObjectMeta }>;

/** A controller reference: the owner to read next. */
type ControllerRef = NonNullable<ObjectMeta['ownerReferences']>[number];

function controllerOf(meta: ObjectMeta): ControllerRef | undefined {
  const ref = (meta.ownerReferences ?? []).find((r) => r.controller === true);
  return ref !== undefined && typeof ref.uid === 'string' && ref.uid !== '' ? ref : undefined;
}

/** The pods whose chain leads to the target, and why a chain could not be followed (a missing grant), if one could not. */
export interface ChainResult {
  readonly pods: Pod[];
  readonly unread?: string;
}

/** Follows pods' controller chains up to a target, reading each owner on the way once. */
export class OwnerChain {
  readonly #transport: KubeTransport;
  readonly #discovery: KindDiscovery;

  constructor(transport: KubeTransport, discovery: KindDiscovery) {
    this.#transport = transport;
    this.#discovery = discovery;
  }

  /**
   * The pods among `pods` (in `namespace`, trimmed: trim.ts trimPod keeps the controller
   * reference) whose controller chain leads to `targetUID` within MAX_OWNER_HOPS owners.
   * An owner that is gone, has another UID, is of a kind discovery does not find, or past
   * MAX_OWNERS_READ, ends its chain (its pods are not the target's). Rejects on errors a
   * retry may fix; a 403, or the apiserver's 400/422 on the read (of a kind a pod's writer
   * named that will not be listed so: that writer's error, not the operator's), ends the
   * chain and is said in `unread`. `signal` aborts the reads.
   */
  async podsLeadingTo(
    targetUID: string,
    namespace: string,
    pods: readonly Pod[],
    signal?: AbortSignal,
  ): Promise<ChainResult> {
    const parents = new Map<string, Promise<ControllerRef | undefined>>();
    let unread: string | undefined;
    const parentOf = (ref: ControllerRef): Promise<ControllerRef | undefined> => {
      let parent = parents.get(ref.uid);
      if (parent === undefined) {
        parent =
          parents.size >= MAX_OWNERS_READ
            ? Promise.resolve(undefined)
            : this.#read(namespace, ref, signal).catch((err: unknown) => {
                const refused = err instanceof ForbiddenError ? err.message : refusedInput(err);
                if (refused === undefined) throw err;
                unread = refused;
                return undefined;
              });
        parents.set(ref.uid, parent);
      }
      return parent;
    };
    const owned: Pod[] = [];
    for (const pod of pods) {
      let ref = controllerOf(pod.metadata);
      for (let hop = 0; ref !== undefined && ref.uid !== targetUID && hop < MAX_OWNER_HOPS; hop++)
        ref = await parentOf(ref);
      if (ref?.uid === targetUID) owned.push(pod);
    }
    return { pods: owned, ...(unread !== undefined ? { unread } : {}) };
  }

  /** The controller of the owner `ref` names, when that owner exists in `namespace` with `ref`'s UID. */
  async #read(
    namespace: string,
    ref: ControllerRef,
    signal?: AbortSignal,
  ): Promise<ControllerRef | undefined> {
    if (!isDnsSubdomain(ref.name)) return undefined;
    const resource = await this.#discovery.resource(ref.apiVersion, ref.kind);
    if (resource === undefined) return undefined;
    const page = await this.#transport.request<OwnerList>({
      path: resourcePath(resource, namespace),
      query: { fieldSelector: `metadata.name=${ref.name}`, limit: 1 },
      maxResponseBytes: MAX_OBJECT_JSON_BYTES,
      timeoutMs: OWNER_READ_TIMEOUT_MS,
      ...(signal !== undefined ? { signal } : {}),
    });
    const owner = page.items[0];
    return owner?.metadata.uid === ref.uid ? controllerOf(owner.metadata) : undefined;
  }
}
