// The typed AITask client every entry point uses: version-typed CRUD, status writes
// through the status subresource, and finalizer add/remove that survive conflicts.

import type { VersionName } from './crd.ts';
import { FINALIZER } from './install.ts';
import { ResourceClient, retryOnConflict, type ResourceType } from '../lib/kube/resources.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import { GROUP, PLURAL } from './schema/common.ts';
import type * as v1alpha1 from './schema/v1alpha1.ts';
import type * as v1 from './schema/v1.ts';
import type * as v2 from './schema/v2.ts';

/** The object type at each served version. */
export interface AITaskByVersion {
  v1alpha1: v1alpha1.AITask;
  v1: v1.AITask;
  v2: v2.AITask;
}

/** The AITask resource at `version`. */
export function aitaskResource(version: VersionName): ResourceType {
  return { group: GROUP, version, plural: PLURAL, namespaced: true };
}

/** AITask access at one API version (default v2, the storage version). */
export class AITaskClient<V extends VersionName = 'v2'> extends ResourceClient<AITaskByVersion[V]> {
  readonly version: V;
  constructor(transport: KubeTransport, version: V) {
    super(transport, aitaskResource(version));
    this.version = version;
  }

  /** Writes `status` through the status subresource with a merge patch (no resourceVersion check). */
  patchStatus(
    namespace: string,
    name: string,
    status: AITaskByVersion[V]['status'],
  ): Promise<AITaskByVersion[V]> {
    return this.patch(namespace, name, { status }, { subresource: 'status' });
  }

  /** PUT of the status subresource, bound to the object's resourceVersion (ConflictError if stale). */
  replaceStatus(obj: AITaskByVersion[V]): Promise<AITaskByVersion[V]> {
    return this.replace(obj.metadata.namespace, obj.metadata.name ?? '', obj, 'status');
  }

  /**
   * Adds `finalizer` (default ours) if absent; retries conflicts (5 attempts). Returns the object.
   * `seen`, the object as last read (e.g. from a cache), saves the first GET: the first patch is
   * bound to its resourceVersion, and only a conflict reads the object again.
   */
  addFinalizer(
    namespace: string,
    name: string,
    finalizer: string = FINALIZER,
    seen?: AITaskByVersion[V],
  ): Promise<AITaskByVersion[V]> {
    return this.#editFinalizers(
      namespace,
      name,
      (f) => (f.includes(finalizer) ? undefined : [...f, finalizer]),
      seen,
    );
  }

  /** Removes `finalizer` (default ours) if present; retries conflicts (5 attempts). */
  removeFinalizer(
    namespace: string,
    name: string,
    finalizer: string = FINALIZER,
  ): Promise<AITaskByVersion[V]> {
    return this.#editFinalizers(namespace, name, (f) =>
      f.includes(finalizer) ? f.filter((x) => x !== finalizer) : undefined,
    );
  }

  #editFinalizers(
    namespace: string,
    name: string,
    edit: (f: string[]) => string[] | undefined,
    seen?: AITaskByVersion[V],
  ): Promise<AITaskByVersion[V]> {
    let first = seen;
    return retryOnConflict(async () => {
      const obj = first ?? (await this.get(namespace, name));
      first = undefined;
      const next = edit(obj.metadata.finalizers ?? []);
      if (next === undefined) return obj;
      return this.patch(namespace, name, {
        metadata: { finalizers: next, resourceVersion: obj.metadata.resourceVersion },
      });
    });
  }
}
