// A list+watch cache for one resource type, the client-go reflector in small: it lists a
// page at a time (ResourceClient.page, each page's bytes bounded), then watches from the
// list's resourceVersion with bookmarks, relists on 410 Gone, reconnects with jittered
// exponential backoff after errors (including an apiserver that went away), and a stall
// watchdog aborts a watch that stays silent past its own timeout. A resource not served yet
// (404 before the first list: its CRD is not installed or not established) is waited for
// quietly, polled at most every 5 s, and reported once through `onNotServed`. A resource the
// operator may not list (403 before the first list, with `onForbidden`: an admin has not
// granted that kind) settles the cache as forbidden instead of failing: readers say so, and
// the list is retried with the capped backoff until the grant comes.
// Every object passes the transform (trim.ts) before it is cached and is charged what it costs
// the heap (heap-charge.ts, with its key and index entries); one past its budget
// (cache-budget.ts: its own bound, the cache's share of the memory ledger or its namespace's)
// or one `admit` turns away is refused: not cached, counted by reason, reported, and remembered by key so a reader can
// say why it is missing (`refusal`).

import { ForbiddenError, GoneError, ApiError, NotFoundError } from '../../lib/kube/errors.ts';
import { pause } from '../../lib/kube/retry-after.ts';
import {
  DEFAULT_PAGE_BYTES,
  pageSizeFor,
  type ResourceClient,
  type WatchEvent,
} from '../../lib/kube/resources.ts';
import { CacheBudget, MAX_REFUSALS_KEPT, type Refusal, type RefusalReason } from './cache-budget.ts';
import { CacheIndexes } from './cache-index.ts';
import type { InformerHandlers, InformerOptions, KubeObject } from './informer-options.ts';
import { StringPool } from './intern.ts';
import { heapCharge, stringCharge } from './heap-charge.ts';

export type { InformerHandlers, InformerOptions, KubeObject } from './informer-options.ts';

/** The namespace/name key of an object (name alone for cluster-scoped objects). */
export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
}

/**
 * Failures in a row after which a list+watch counts as failing (about 6 s of backoff): fewer
 * are what an apiserver restart or its watch cache warming up ("storage is (re)initializing",
 * HTTP 429) looks like.
 */
export const FAILING_AFTER = 3;

/** Annotation `kubectl apply` keeps: the whole last applied object again, as a JSON string. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Drops what no controller reads but every object carries: metadata.managedFields (often
 * larger than the object itself) and kubectl's last-applied-configuration annotation (a
 * second copy of the object). Mutates and returns `obj`.
 */
export function slimMetadata<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta.managedFields !== undefined) delete meta.managedFields;
  if (meta.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    const kept = Object.entries(meta.annotations).filter(([k]) => k !== LAST_APPLIED_ANNOTATION);
    if (kept.length > 0) meta.annotations = Object.fromEntries(kept);
    else delete meta.annotations;
  }
  return obj;
}

const sharedStrings = new StringPool();

/** Heap charge of one entry of a Map or Set (key and value slots, chain, buckets at a load factor of two), in bytes. */
const MAP_ENTRY = 64;

/**
 * What caching `obj` costs the heap, in bytes of charge: its own (heapCharge, with the
 * option's sharedKeys), its key's string and entries in the cache and the budget, and each of
 * its index values with its entries. What Informer.bytes adds up and the budget bounds.
 */
export function entryCharge<T extends KubeObject>(
  obj: T,
  opts: Pick<InformerOptions<T>, 'sharedKeys' | 'indexers'>,
): number {
  let charge = heapCharge(obj, opts.sharedKeys) + stringCharge(objectKey(obj)) + 2 * MAP_ENTRY;
  for (const indexer of Object.values(opts.indexers ?? {}))
    for (const value of indexer(obj)) charge += stringCharge(value) + 2 * MAP_ENTRY;
  return charge;
}

/** A self-healing cache of one resource type. */
export class Informer<T extends KubeObject> {
  readonly #client: ResourceClient<T>;
  readonly #opts: InformerOptions<T>;
  readonly #cache = new Map<string, T>();
  readonly #budget: CacheBudget;
  /** Why objects now refused are, by key (at most MAX_REFUSALS_KEPT). */
  readonly #refusals = new Map<string, Refusal>();
  readonly #indexes: CacheIndexes<T>;
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #abort = new AbortController();
  #resourceVersion = '';
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #settleWaiters: (() => void)[] = [];
  /** Why the first list was forbidden, until a list succeeds (see onForbidden). */
  #forbidden: string | undefined;
  #running: Promise<void> | undefined;
  #failures = 0;
  #lastError = '';
  /** The last failure was the resource not being served yet (reported once, see onNotServed). */
  #waitingToBeServed = false;
  /** Completed relists (the initial list counts), for metrics and tests. */
  relists = 0;
  /** Objects refused so far, for any reason (each version counts once per sighting). */
  refused = 0;
  /** Objects refused so far, by reason. */
  readonly refusedBy: Record<RefusalReason, number> = { TooLarge: 0, NotAdmitted: 0, CacheFull: 0 };

  constructor(client: ResourceClient<T>, opts: InformerOptions<T> = {}) {
    this.#client = client;
    this.#opts = opts;
    this.#budget = new CacheBudget(opts);
    this.#indexes = new CacheIndexes(opts.indexers ?? {});
  }

  /** Registers callbacks; call before `start`. */
  on(handlers: InformerHandlers<T>): void {
    this.#handlers.push(handlers);
  }

  /** True once the first list has been applied. */
  get synced(): boolean {
    return this.#synced;
  }

  /**
   * The last error while the list+watch has failed three or more times in a row (about 6 s
   * of backoff; the cache then serves what it last saw), else undefined. Cleared as soon as
   * the apiserver accepts a watch again, without waiting for an event.
   */
  get failing(): string | undefined {
    return this.#failures >= FAILING_AFTER && this.#forbidden === undefined ? this.#lastError : undefined;
  }

  /** Why the first list was forbidden (403, with `onForbidden`), until a list succeeds; else undefined. */
  get forbidden(): string | undefined {
    return this.#forbidden;
  }

  /** Synced, or forbidden before its first list (with `onForbidden`): what readiness waits for. */
  get settled(): boolean {
    return this.#synced || this.#forbidden !== undefined;
  }

  /** Number of cached objects. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * Heap charge of the cached objects (as transformed) with their keys and index entries, in
   * bytes: never less than what the heap holds for them (heap-charge.test.ts).
   */
  get bytes(): number {
    return this.#budget.bytes;
  }

  /** The cached object for `key` (namespace/name). */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  /**
   * Why the object `key` is not cached, while its last version seen was refused (and its
   * refusal is among the MAX_REFUSALS_KEPT remembered); undefined otherwise.
   */
  refusal(key: string): Refusal | undefined {
    return this.#refusals.get(key);
  }

  /** Keys of the cached objects whose index `name` contains `value`. */
  byIndex(name: string, value: string): string[] {
    return this.#indexes.keys(name, value);
  }

  /** Starts list+watch in the background; resolves once settled (the first list applied, or forbidden). */
  start(): Promise<void> {
    this.#running ??= this.#run();
    return this.waitForSettled();
  }

  /** Resolves once settled (immediately if already). */
  waitForSettled(): Promise<void> {
    return this.settled ? Promise.resolve() : new Promise((r) => this.#settleWaiters.push(r));
  }

  /** Resolves once synced (immediately if already). */
  waitForSync(): Promise<void> {
    return this.#synced ? Promise.resolve() : new Promise((r) => this.#syncWaiters.push(r));
  }

  /** Stops watching and waits for the loop to end. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
  }

  async #run(): Promise<void> {
    let needList = true;
    while (!this.#abort.signal.aborted) {
      try {
        if (needList) await this.#list();
        needList = false;
        await this.#watchOnce(() => (this.#failures = 0));
      } catch (err) {
        if (this.#stopping()) break;
        if (err instanceof GoneError) {
          needList = true;
          continue;
        }
        const onNotServed = this.#synced ? undefined : this.#opts.onNotServed;
        const notServed = err instanceof NotFoundError && onNotServed !== undefined;
        const onForbidden = this.#synced ? undefined : this.#opts.onForbidden;
        this.#failures++;
        if (err instanceof ForbiddenError && onForbidden !== undefined) {
          if (this.#forbidden === undefined) {
            this.#forbidden = err.message;
            onForbidden(err);
            for (const w of this.#settleWaiters.splice(0)) w();
          }
        } else if (!notServed) this.#opts.onError?.(err, this.#failures);
        else if (!this.#waitingToBeServed) onNotServed(err);
        this.#waitingToBeServed = notServed;
        this.#lastError = (err as Error).message;
        if (this.#failures > 3) needList = true;
        const delay = this.#backoff(this.#failures);
        await pause(
          this.#waitingToBeServed ? Math.min(delay, this.#opts.notServedPollMs ?? 5000) : delay,
          this.#abort.signal,
        );
      }
    }
  }

  #stopping(): boolean {
    return this.#abort.signal.aborted;
  }

  #backoff(failures: number): number {
    const base = this.#opts.backoffBaseMs ?? 800;
    const max = this.#opts.backoffMaxMs ?? 30_000;
    return Math.min(max, base * 2 ** (failures - 1)) * (0.5 + Math.random());
  }

  /**
   * Lists page by page, caching each page's objects as it arrives (so only one page of raw
   * objects is alive at a time), then drops cached objects the list no longer has. An
   * expired continue token surfaces as GoneError and the caller relists from the start.
   */
  async #list(): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.#client.page(this.#opts.namespace, {
        limit: this.#opts.pageSize ?? pageSizeFor(DEFAULT_PAGE_BYTES),
        ...(this.#opts.labelSelector ? { labelSelector: this.#opts.labelSelector } : {}),
        ...(cont ? { continue: cont } : {}),
      });
      for (const item of page.items) {
        seen.add(objectKey(item));
        this.#apply('MODIFIED', item);
      }
      resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
      cont = page.metadata.continue;
    } while (cont);
    for (const [key, obj] of [...this.#cache]) if (!seen.has(key)) this.#apply('DELETED', obj);
    for (const key of [...this.#refusals.keys()]) if (!seen.has(key)) this.#refusals.delete(key);
    this.#resourceVersion = resourceVersion;
    this.relists++;
    this.#forbidden = undefined;
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
      for (const w of this.#settleWaiters.splice(0)) w();
    }
  }

  async #watchOnce(onData: () => void): Promise<void> {
    const timeoutSeconds = this.#opts.watchTimeoutSeconds ?? 60 + Math.floor(Math.random() * 60);
    const stream = new AbortController();
    const stop = (): void => stream.abort();
    this.#abort.signal.addEventListener('abort', stop);
    let watchdog = setTimeout(stop, (timeoutSeconds + 30) * 1000);
    let failure: ApiError | undefined;
    try {
      await this.#client.watch(
        this.#opts.namespace,
        {
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          ...(this.#opts.labelSelector ? { labelSelector: this.#opts.labelSelector } : {}),
        },
        (ev) => {
          if (failure !== undefined) return;
          clearTimeout(watchdog);
          watchdog = setTimeout(stop, (timeoutSeconds + 30) * 1000);
          onData();
          failure = this.#onEvent(ev);
          if (failure !== undefined) stop();
        },
        stream.signal,
        onData,
      );
    } finally {
      clearTimeout(watchdog);
      this.#abort.signal.removeEventListener('abort', stop);
    }
    if (failure !== undefined) throw failure;
  }

  /** Applies one watch event; returns the error an ERROR event carries. */
  #onEvent(ev: WatchEvent<T>): ApiError | undefined {
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as { code?: number; message?: string; reason?: string };
      const code = status.code ?? 500;
      return code === 410
        ? new GoneError(410, status, 'watch expired')
        : new ApiError(code, status, `watch error ${code}`);
    }
    const rv = ev.object.metadata.resourceVersion;
    if (rv !== undefined) this.#resourceVersion = rv;
    if (ev.type !== 'BOOKMARK') this.#apply(ev.type, ev.object);
    return undefined;
  }

  #apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', raw: T): void {
    const obj = (this.#opts.transform ?? slimMetadata)(raw);
    const key = objectKey(obj);
    const old = this.#cache.get(key);
    if (type === 'DELETED') {
      this.#refusals.delete(key);
      this.#remove(key, old);
      return;
    }
    if (old?.metadata.resourceVersion === obj.metadata.resourceVersion && old !== undefined) return;
    const bytes = entryCharge(obj, this.#opts);
    const refusal = this.#budget.refusal(key, obj.metadata.namespace ?? '', bytes, () =>
      this.#opts.admit?.(obj),
    );
    if (refusal !== undefined) {
      this.refused++;
      this.refusedBy[refusal.reason]++;
      this.#remove(key, old);
      if (this.#refusals.size < MAX_REFUSALS_KEPT || this.#refusals.has(key))
        this.#refusals.set(key, refusal);
      this.#opts.onRefused?.(obj, bytes, refusal);
      return;
    }
    this.#refusals.delete(key);
    (this.#opts.strings ?? sharedStrings).internAll(obj);
    this.#cache.set(key, obj);
    this.#budget.hold(key, obj.metadata.namespace ?? '', bytes);
    this.#indexes.update(key, old, obj);
    for (const h of this.#handlers) {
      if (old) h.update?.(old, obj);
      else h.add?.(obj);
    }
  }

  /** Drops `key` (cached as `old`, if at all) and tells the handlers. */
  #remove(key: string, old: T | undefined): void {
    if (!old) return;
    this.#cache.delete(key);
    this.#budget.release(key, old.metadata.namespace ?? '');
    this.#indexes.update(key, old, undefined);
    for (const h of this.#handlers) h.delete?.(old);
  }
}
