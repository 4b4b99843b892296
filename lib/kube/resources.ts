// Typed access to any Kubernetes resource by group/version/plural, on top of the
// transport: path building, CRUD, patch, status and scale subresources, list and watch.
// Lists are read in pages sized from a byte budget (pageSizeFor), each page's answer bounded
// by what that many of the largest objects etcd stores take (pageResponseBytes); a page past
// it is read again one object at a time, so one object a writer made as large as it can
// never stops a list, and no list holds more than its budget at once.

import { ConflictError } from './errors.ts';
import { ResponseTooLargeError } from './bounded-read.ts';
import type { KubeTransport, PatchType } from './transport.ts';

/**
 * The largest object a default cluster stores, in bytes: 1.5 MiB, etcd's default
 * `--max-request-bytes` (built-in kinds are stored as protobuf, custom resources as JSON).
 */
export const APISERVER_MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

/**
 * JSON bytes one stored byte may be sent as, at worst: 6. The apiserver's encoder writes
 * `<`, `>`, `&` and control characters as six-byte `\u00XX` escapes, so an object of
 * APISERVER_MAX_OBJECT_BYTES can arrive as six times as much text (it parses back to its size).
 */
export const JSON_ESCAPE_FACTOR = 6;

/**
 * Bytes of a list's or a watch event's own JSON around its objects (kind, apiVersion,
 * resourceVersion, a continue token of a few hundred bytes, separators): 64 KiB, with room.
 */
export const LIST_FRAMING_BYTES = 64 * 1024;

/**
 * The most JSON one stored object can be sent as, with its framing: ~9.06 MiB
 * (APISERVER_MAX_OBJECT_BYTES × JSON_ESCAPE_FACTOR + LIST_FRAMING_BYTES). The bound of a
 * watch line and of a page read one object at a time.
 */
export const MAX_OBJECT_JSON_BYTES = APISERVER_MAX_OBJECT_BYTES * JSON_ESCAPE_FACTOR + LIST_FRAMING_BYTES;

/**
 * The page budget of a list no caller sized: 16 MiB of objects, so 10 objects a page
 * (pageSizeFor). A page's text, its parsed objects and what the caller keeps of them are
 * alive at once: about three times this, within the operator's ~259 MiB
 * V8 heap (what Node 24 derives under the shipped 384 Mi limit).
 */
export const DEFAULT_PAGE_BYTES = 16 * 1024 * 1024;

/**
 * Objects per page so that a page of objects each `objectBytes` large (default
 * APISERVER_MAX_OBJECT_BYTES) stays within `pageBytes`: at least 1, at most 500 (client-go's
 * pager default). Pure.
 */
export function pageSizeFor(pageBytes: number, objectBytes: number = APISERVER_MAX_OBJECT_BYTES): number {
  return Math.min(500, Math.max(1, Math.floor(pageBytes / objectBytes)));
}

/**
 * The answer bound of a page of `limit` objects, in bytes: `limit` objects of
 * APISERVER_MAX_OBJECT_BYTES and LIST_FRAMING_BYTES. A page past it (objects whose JSON is
 * escaped past their stored size) is read again one object at a time (ResourceClient.page).
 */
export function pageResponseBytes(limit: number): number {
  return limit * APISERVER_MAX_OBJECT_BYTES + LIST_FRAMING_BYTES;
}

/** Identifies a resource type. `group` is '' for the core API. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** CustomResourceDefinitions (apiextensions.k8s.io/v1, cluster-scoped). */
export const CRD_RESOURCE: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
}

export interface List<T> {
  items: T[];
  metadata: ListMeta;
}

/** One watch event. BOOKMARK objects carry only metadata.resourceVersion. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

/** Builds the API path of a resource, a named object, or one of its subresources. */
export function resourcePath(
  t: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns = t.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name !== undefined ? `/${encodeURIComponent(name)}` : '';
  const sub = subresource !== undefined && name !== undefined ? `/${subresource}` : '';
  return `${base}${ns}/${t.plural}${obj}${sub}`;
}

/** CRUD + watch for one resource type. Objects are returned as the server sent them. */
export class ResourceClient<T> {
  readonly type: ResourceType;
  readonly transport: KubeTransport;
  constructor(transport: KubeTransport, type: ResourceType) {
    this.transport = transport;
    this.type = type;
  }

  get(namespace: string | undefined, name: string): Promise<T> {
    return this.transport.request<T>({ path: resourcePath(this.type, namespace, name) });
  }

  /**
   * One page of a list; `namespace` undefined lists across all namespaces. Its answer is
   * bounded by `maxResponseBytes` (default the transport's, DEFAULT_MAX_RESPONSE_BYTES);
   * `signal` aborts it.
   */
  list(
    namespace: string | undefined,
    opts: ListOptions = {},
    maxResponseBytes?: number,
    signal?: AbortSignal,
  ): Promise<List<T>> {
    return this.transport.request<List<T>>({
      path: resourcePath(this.type, namespace),
      query: { ...opts },
      ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  /**
   * One page of at most `opts.limit` objects (default pageSizeFor(DEFAULT_PAGE_BYTES), 10),
   * its answer bounded by pageResponseBytes. A page past that bound is read again from the
   * same point as one object (bounded by MAX_OBJECT_JSON_BYTES, what any stored object fits
   * in): the caller goes on from that page's continue token, so a page of objects sent
   * larger than they are stored costs requests, never memory. A single object past even
   * that bound rejects with ResponseTooLargeError. `signal` aborts it.
   */
  async page(namespace: string | undefined, opts: ListOptions = {}, signal?: AbortSignal): Promise<List<T>> {
    const limit = opts.limit ?? pageSizeFor(DEFAULT_PAGE_BYTES);
    if (limit > 1)
      try {
        return await this.list(namespace, { ...opts, limit }, pageResponseBytes(limit), signal);
      } catch (err) {
        if (!(err instanceof ResponseTooLargeError)) throw err;
      }
    return this.list(namespace, { ...opts, limit: 1 }, MAX_OBJECT_JSON_BYTES, signal);
  }

  /**
   * Lists every page (ResourceClient.page: default page size pageSizeFor(DEFAULT_PAGE_BYTES)),
   * handing each page's items to `each` before the next is read, so no more than one page is
   * held: for a list of objects a tenant can make as large as the apiserver stores, with a
   * `limit` that bounds a page's bytes. `each` returning false stops the list there;
   * `signal` aborts it (the page being read rejects, no further page is asked for).
   */
  async forEachPage(
    namespace: string | undefined,
    opts: Omit<ListOptions, 'continue'>,
    each: (items: readonly T[]) => unknown,
    signal?: AbortSignal,
  ): Promise<void> {
    let cont: string | undefined;
    do {
      const page = await this.page(namespace, { ...opts, ...(cont ? { continue: cont } : {}) }, signal);
      if (each(page.items) === false) return;
      cont = page.metadata.continue;
    } while (cont);
  }

  /**
   * Lists every page (ResourceClient.page: default page size pageSizeFor(DEFAULT_PAGE_BYTES))
   * and returns them together: only for kinds no tenant writes, or callers that bound the
   * count otherwise (the plugin, for a person).
   */
  async listAll(namespace: string | undefined, opts: Omit<ListOptions, 'continue'> = {}): Promise<List<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let meta: ListMeta;
    do {
      const page = await this.page(namespace, { ...opts, ...(cont ? { continue: cont } : {}) });
      items.push(...page.items);
      meta = page.metadata;
      cont = page.metadata.continue;
    } while (cont);
    return {
      items,
      metadata: { ...(meta.resourceVersion !== undefined ? { resourceVersion: meta.resourceVersion } : {}) },
    };
  }

  create(
    namespace: string | undefined,
    obj: T,
    query: { dryRun?: 'All'; fieldManager?: string } = {},
  ): Promise<T> {
    return this.transport.request<T>({
      method: 'POST',
      path: resourcePath(this.type, namespace),
      body: obj,
      query,
    });
  }

  /** PUT; carries the object's resourceVersion, so a stale write fails with ConflictError. */
  replace(namespace: string | undefined, name: string, obj: T, subresource?: string): Promise<T> {
    return this.transport.request<T>({
      method: 'PUT',
      path: resourcePath(this.type, namespace, name, subresource),
      body: obj,
    });
  }

  patch(
    namespace: string | undefined,
    name: string,
    patch: unknown,
    opts: { type?: PatchType; subresource?: string; fieldManager?: string; force?: boolean } = {},
  ): Promise<T> {
    return this.transport.request<T>({
      method: 'PATCH',
      path: resourcePath(this.type, namespace, name, opts.subresource),
      body: patch,
      patchType: opts.type ?? 'merge',
      query: { fieldManager: opts.fieldManager, force: opts.force },
    });
  }

  delete(namespace: string | undefined, name: string, body?: unknown): Promise<unknown> {
    return this.transport.request({ method: 'DELETE', path: resourcePath(this.type, namespace, name), body });
  }

  /**
   * Streams watch events from `resourceVersion` until the server ends the watch or `signal`
   * aborts; `onOpen` runs once the apiserver has accepted the watch, before any event.
   * Rejects with GoneError when the resourceVersion is too old (relist then), with
   * ResponseTooLargeError on an event line past MAX_OBJECT_JSON_BYTES (none a stored object
   * makes), and with what `onEvent` throws.
   */
  watch(
    namespace: string | undefined,
    opts: ListOptions & { timeoutSeconds?: number; allowWatchBookmarks?: boolean },
    onEvent: (ev: WatchEvent<T>) => void,
    signal?: AbortSignal,
    onOpen?: () => void,
  ): Promise<void> {
    return this.transport.stream(
      {
        path: resourcePath(this.type, namespace),
        query: { ...opts, watch: true },
        maxResponseBytes: MAX_OBJECT_JSON_BYTES,
        ...(signal ? { signal } : {}),
      },
      (line) => onEvent(JSON.parse(line) as WatchEvent<T>),
      onOpen,
    );
  }
}

/**
 * Runs `fn` again when it throws ConflictError: up to `attempts` times (default 5) with
 * a jittered backoff starting at `baseMs` (default 10 ms) and doubling. Other errors pass through.
 */
export async function retryOnConflict<R>(fn: () => Promise<R>, attempts = 5, baseMs = 10): Promise<R> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConflictError) || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (i - 1) * (0.5 + Math.random())));
    }
  }
}
