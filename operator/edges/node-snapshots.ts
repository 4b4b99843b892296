// The operator's view of the cluster's nodes, shared by everything that reads them: the
// cordon caps of every CordonNode evaluation, the finalizer (which nodes carry an AITask's
// mark) and the sweep of stale marks. One paginated LIST serves every reader for up to
// `maxAgeMs`, and readers that come while it runs wait for it, so node reads follow the
// clock, not the number of AITasks or how often they are evaluated (a tenant's twenty
// breaching CordonNode tasks cost what one does). Each page is reduced to CordonStates
// (api/cordon.ts) as it arrives, so what is kept between lists is a few dozen bytes a node.
// The operator's own node patches invalidate the view: the next reader lists again, and a
// list that began before the patch is never kept as fresh. A reader that must see every
// change made before some moment (the finalizer: every mark written before its AITask's
// deletion) asks for a list begun after it (`readSince`), which readers share too.

import { cordonState, type CordonState, type MarkedNode } from '../../api/cordon.ts';
import { DEFAULT_PAGE_BYTES, pageSizeFor } from '../../lib/kube/resources.ts';

/** Longest a node list is reused, in ms: 10 s (the shortest AITask interval the schema allows). */
export const NODE_SNAPSHOT_MAX_AGE_MS = 10_000;

/**
 * Nodes per page of the node LIST: 10, pageSizeFor(DEFAULT_PAGE_BYTES), so a page of nodes
 * each as large as etcd stores fits 16 MiB (each page is read through ResourceClient.page,
 * its answer bounded). A cluster of 5,000 nodes costs 500 requests a list, at most one list
 * every NODE_SNAPSHOT_MAX_AGE_MS and only while CordonNode tasks, the finalizer or the
 * sweep read nodes.
 */
export const NODE_PAGE_SIZE = pageSizeFor(DEFAULT_PAGE_BYTES);

/** One page of a node LIST, as ResourceClient.list returns it. */
export interface NodePage {
  readonly items: readonly MarkedNode[];
  readonly metadata: { readonly continue?: string };
}

/** Options of NodeSnapshots. */
export interface NodeSnapshotOptions {
  /** Reads one page: `continueToken` undefined for the first, `limit` NODE_PAGE_SIZE. */
  readonly page: (continueToken: string | undefined, limit: number) => Promise<NodePage>;
  /** How long a list is reused, in ms (default NODE_SNAPSHOT_MAX_AGE_MS). */
  readonly maxAgeMs?: number;
  /** Wall clock in ms (default Date.now): `readSince` compares it with API timestamps. */
  readonly now?: () => number;
}

interface Taken {
  readonly states: readonly CordonState[];
  /** When its list began (ms): its age counts from there. */
  readonly at: number;
  readonly generation: number;
}

/** The shared, periodically listed view of every node. */
export class NodeSnapshots {
  readonly #o: NodeSnapshotOptions;
  readonly #now: () => number;
  #generation = 0;
  #taken: Taken | undefined;
  #running:
    | { readonly promise: Promise<readonly CordonState[]>; readonly generation: number; readonly at: number }
    | undefined;
  #lists = 0;

  constructor(o: NodeSnapshotOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /**
   * Every node's CordonState as of a list begun at most `maxAgeMs` ago and after the last
   * `invalidate()`; lists (joining a list already under way that began after it) when there
   * is none. A failed list rejects every reader waiting for it and is not kept: the next
   * read lists again (the caller's retry paces it).
   */
  read(): Promise<readonly CordonState[]> {
    const t = this.#taken;
    if (
      t !== undefined &&
      t.generation === this.#generation &&
      this.#now() - t.at < (this.#o.maxAgeMs ?? NODE_SNAPSHOT_MAX_AGE_MS)
    )
      return Promise.resolve(t.states);
    return this.fresh();
  }

  /**
   * Every node's CordonState as of a list begun at or after `since` (wall clock ms) and after
   * the last `invalidate()`: the one kept, the one under way, else a new one. Failures as `read`.
   */
  readSince(since: number): Promise<readonly CordonState[]> {
    const t = this.#taken;
    if (t !== undefined && t.generation === this.#generation && t.at >= since)
      return Promise.resolve(t.states);
    const r = this.#running;
    if (r !== undefined && r.generation === this.#generation && r.at >= since) return r.promise;
    return this.#list();
  }

  /**
   * Every node's CordonState from a list begun after the last `invalidate()`: the one under
   * way, else a new one. For the check right before a cordon (never a reused list).
   */
  fresh(): Promise<readonly CordonState[]> {
    const r = this.#running;
    if (r !== undefined && r.generation === this.#generation) return r.promise;
    return this.#list();
  }

  /** The node view is out of date (this process patched a node): the next read lists again. */
  invalidate(): void {
    this.#generation++;
  }

  /** LISTs begun so far (each one paginated request sequence). */
  get lists(): number {
    return this.#lists;
  }

  #list(): Promise<readonly CordonState[]> {
    const generation = this.#generation;
    const at = this.#now();
    this.#lists++;
    const promise = (async () => {
      const states: CordonState[] = [];
      let token: string | undefined;
      do {
        const page = await this.#o.page(token, NODE_PAGE_SIZE);
        for (const n of page.items) states.push(cordonState(n));
        token = page.metadata.continue === '' ? undefined : page.metadata.continue;
      } while (token !== undefined);
      if (generation === this.#generation) this.#taken = { states, at, generation };
      return states;
    })();
    const running = { promise, generation, at };
    this.#running = running;
    const clear = (): void => {
      if (this.#running === running) this.#running = undefined;
    };
    promise.then(clear, clear);
    return promise;
  }
}
