// Typed access to any Kubernetes resource by group/version/plural, on top of the
// transport: path building, CRUD, patch, status and scale subresources, list and watch.

import { ConflictError } from './errors.ts';
import type { KubeTransport, PatchType } from './transport.ts';

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

  /** One page of a list; `namespace` undefined lists across all namespaces. */
  list(namespace: string | undefined, opts: ListOptions = {}): Promise<List<T>> {
    return this.transport.request<List<T>>({ path: resourcePath(this.type, namespace), query: { ...opts } });
  }

  /**
   * Lists every page (default page size 500), handing each page's items to `each` before the
   * next is read, so no more than one page is held: for a list of objects a tenant can make as
   * large as the apiserver stores, with a `limit` that bounds a page's bytes.
   */
  async forEachPage(
    namespace: string | undefined,
    opts: Omit<ListOptions, 'continue'>,
    each: (items: readonly T[]) => void,
  ): Promise<void> {
    let cont: string | undefined;
    do {
      const page = await this.list(namespace, { limit: 500, ...opts, ...(cont ? { continue: cont } : {}) });
      each(page.items);
      cont = page.metadata.continue;
    } while (cont);
  }

  /** Lists every page (default page size 500). */
  async listAll(namespace: string | undefined, opts: Omit<ListOptions, 'continue'> = {}): Promise<List<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let meta: ListMeta;
    do {
      const page = await this.list(namespace, { limit: 500, ...opts, ...(cont ? { continue: cont } : {}) });
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
   * Rejects with GoneError when the resourceVersion is too old (relist then).
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
