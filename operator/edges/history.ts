// Keeps an AITask's spec history as owned ControllerRevisions (format in api/revisions.ts):
// one per observed generation, the newest DEFAULT_REVISION_LIMIT (10) kept. Only the operator
// writes them (a tenant's role has no ControllerRevisions), and the pruning list is read in
// pages whose answers are bounded (ResourceClient.listAll through ResourceClient.page).

import { AlreadyExistsError, NotFoundError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import {
  buildRevision,
  DEFAULT_REVISION_LIMIT,
  revisionSelector,
  revisionsToPrune,
  type ControllerRevision,
} from '../../api/revisions.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { Resources } from '../runtime/kinds.ts';

/** Writes and prunes spec revisions. */
export class History {
  readonly #revisions: ResourceClient<ControllerRevision>;
  readonly #limit: number;

  /** `limit`: revisions kept per AITask (default 10). */
  constructor(transport: KubeTransport, limit: number = DEFAULT_REVISION_LIMIT) {
    this.#revisions = new ResourceClient(transport, Resources.controllerRevisions);
    this.#limit = limit;
  }

  /**
   * Records `task`'s current generation (idempotent) and deletes revisions beyond the limit;
   * the list for pruning is skipped while the generation is within the limit (there cannot be more).
   */
  async record(task: v2.AITask): Promise<void> {
    const namespace = task.metadata.namespace ?? '';
    await this.#revisions.create(namespace, buildRevision(task)).catch((err: unknown) => {
      if (!(err instanceof AlreadyExistsError)) throw err;
    });
    if ((task.metadata.generation ?? 0) <= this.#limit) return;
    const list = await this.#revisions.listAll(namespace, {
      labelSelector: revisionSelector(task.metadata.uid ?? ''),
    });
    for (const name of revisionsToPrune(list.items, this.#limit))
      await this.#revisions.delete(namespace, name).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
  }
}
