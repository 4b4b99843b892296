// The shapes an Informer (informer.ts) is built from: what it caches, the callbacks it tells
// of changes, and its options (scope, transform, budgets, paging, backoff, and what it does
// with a resource not served or not allowed yet).

import type { ObjectMeta } from '../../api/schema/common.ts';
import type { ForbiddenError, NotFoundError } from '../../lib/kube/errors.ts';
import type { Refusal } from './cache-budget.ts';
import type { Indexers } from './cache-index.ts';
import type { StringPool } from './intern.ts';

/** What an informer caches: an object with metadata. */
export interface KubeObject {
  metadata: ObjectMeta;
}

/** Change callbacks; `update` fires only when the resourceVersion moved. */
export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

/** Options of Informer. */
export interface InformerOptions<T> {
  /** Namespace to watch; undefined = all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  /** Secondary indexes: index name → function returning the index values of an object. */
  readonly indexers?: Indexers<T>;
  /** Applied to every object before caching (default: `slimMetadata`); may return a new object. */
  readonly transform?: (obj: T) => T;
  /**
   * Largest transformed object cached, in bytes of heap charge (heap-charge.ts; default: no
   * bound). A larger one is refused: not cached (dropped from the cache, with a `delete`
   * callback, if an earlier version was cached) and passed to `onRefused`.
   */
  readonly maxObjectCharge?: number;
  /**
   * Keys charged as shared by every object of the same shape (a schema's field names): only
   * their slot is charged. Any other key is charged its string and a hidden class of its own
   * (default: none is shared).
   */
  readonly sharedKeys?: ReadonlySet<string>;
  /**
   * Refuses a transformed object for what it holds (a message saying why), or admits it
   * (undefined); default: every object is admitted. Refused as NotAdmitted.
   */
  readonly admit?: (obj: T) => string | undefined;
  /**
   * Heap charge of the objects the cache holds in all, and of one namespace's objects
   * (defaults: no bound), each object's charge with its key and index entries (Informer.charge).
   * An object that would take the cache or its namespace past its share is refused as CacheFull
   * (an earlier version is dropped) until it is seen again with room: its next change, or a
   * relist.
   */
  readonly maxCacheCharge?: number;
  readonly maxNamespaceCharge?: number;
  /** Called with each refused object (transformed), its heap charge in bytes and why; must not throw. */
  readonly onRefused?: (obj: T, charge: number, refusal: Refusal) => void;
  /** Where the strings of cached objects are interned (default: one pool shared by all informers). */
  readonly strings?: StringPool;
  /**
   * Objects per list page (default pageSizeFor(DEFAULT_PAGE_BYTES), 10); pages are cached one
   * by one, never held all at once, each page's answer bounded (ResourceClient.page).
   */
  readonly pageSize?: number;
  /** Reconnect backoff: first delay in ms (default 800), cap in ms (default 30 000), jittered ±50 %. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** Server-side watch timeout in s (default random 60-120); the watchdog fires 30 s after it. */
  readonly watchTimeoutSeconds?: number;
  /**
   * Called on every list/watch failure (the informer keeps retrying) with the number of
   * failures in a row, this one included (1 for the first since a watch was last accepted):
   * from FAILING_AFTER on, `failing` reports it.
   */
  readonly onError?: (err: unknown, failuresInARow: number) => void;
  /**
   * Called once, instead of `onError`, when the first list finds the resource not served
   * (404: its CRD is not installed yet); the informer then polls for it (at most every
   * `notServedPollMs`) without further calls until it is served. Without it a 404 is an
   * error like any other. A 404 after the first list (the CRD deleted) goes to `onError`.
   */
  readonly onNotServed?: (err: NotFoundError) => void;
  /** Longest wait between tries while the resource is not served (default 5 000 ms). */
  readonly notServedPollMs?: number;
  /**
   * Called once, instead of `onError`, when the first list is forbidden (403): the cache then
   * counts as settled (`forbidden` says why, `waitForSettled` resolves) though not synced, and
   * the list is retried with the capped backoff without further calls. Without it a 403 is an
   * error like any other.
   */
  readonly onForbidden?: (err: ForbiddenError) => void;
}
