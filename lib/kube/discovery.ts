// API discovery of kinds: which resource (plural) a `group/version` + `kind` is, whether it is
// namespaced, and whether it has the scale subresource, read from the group-version's
// APIResourceList (`/apis/GROUP/VERSION`, `/api/v1` for the core group). The operator and the
// plugin find a target kind's resource here (it must serve /scale), and the operator the
// owners between a target's pods and it, as the HPA's scale client does through its
// RESTMapper. A kind named in an AITask or an owner reference is a tenant's input, so the
// answer is bounded in bytes and time, kept per group-version in a bounded table with an
// expiry, one group-version is asked at most once at a time, and a group/version the schema
// would refuse is never asked.

import { LruMap } from '../lru-map.ts';
import { NotFoundError } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { KubeTransport } from './transport.ts';

/** Largest APIResourceList read, in bytes (the core group's is ~25 KiB; the largest CRD groups are a few hundred). */
export const DISCOVERY_MAX_BYTES = 1024 * 1024;
/** Timeout of one discovery request, in ms. */
export const DISCOVERY_TIMEOUT_MS = 10_000;
/** Group-versions whose answers are kept (least recently used evicted first). */
export const DISCOVERY_CACHE_ENTRIES = 64;
/** How long an answer (found or not) serves before the group-version is read again, in ms: a CRD installed later is seen within it. */
export const DISCOVERY_MAX_AGE_MS = 5 * 60_000;

/**
 * A group/version (or `v1` of the core group), as the AITask schema's spec.target.apiVersion
 * bounds it. One an owner reference names is a tenant's text: anything else is served by no
 * one and never asked.
 */
export const API_VERSION_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$';
/** The longest group/version: a 253-character group, `/`, a 63-character version. */
export const API_VERSION_MAX_LENGTH = 317;
const API_VERSION = new RegExp(API_VERSION_PATTERN);

/** One resource of an APIResourceList, as discovery reads it. */
interface APIResource {
  readonly name?: unknown;
  readonly kind?: unknown;
  readonly namespaced?: unknown;
}

/** What discovery says of one kind. */
export type ScalableKind =
  | { readonly ok: true; readonly resource: ResourceType }
  | {
      readonly ok: false;
      /** NotServed: no such group-version or kind; NotScalable: no /scale; ClusterScoped: not namespaced. */
      readonly reason: 'NotServed' | 'NotScalable' | 'ClusterScoped';
      readonly message: string;
    };

/** The resources of one group-version (empty when it is not served). */
type GroupVersion = ReadonlyMap<
  string,
  { readonly plural: string; readonly namespaced: boolean; readonly scalable: boolean }
>;

/** The group ('' for the core group) and version of `apiVersion`. */
function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function pathOf(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** The kinds of an APIResourceList answer, keyed by kind; malformed entries are skipped. */
export function kindsOf(answer: unknown): GroupVersion {
  const resources =
    typeof answer === 'object' &&
    answer !== null &&
    Array.isArray((answer as { resources?: unknown }).resources)
      ? ((answer as { resources: unknown[] }).resources as APIResource[])
      : [];
  const subresources = new Set<string>();
  for (const r of resources) if (typeof r.name === 'string' && r.name.includes('/')) subresources.add(r.name);
  const kinds = new Map<string, { plural: string; namespaced: boolean; scalable: boolean }>();
  for (const r of resources) {
    if (typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') continue;
    kinds.set(r.kind, {
      plural: r.name,
      namespaced: r.namespaced === true,
      scalable: subresources.has(`${r.name}/scale`),
    });
  }
  return kinds;
}

/** Finds the resources of kinds (those a target names, which must serve /scale, and the owners between its pods and it): one bounded discovery request per group-version and max age. */
export class KindDiscovery {
  readonly #transport: KubeTransport;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  readonly #cache = new LruMap<string, { readonly at: number; readonly kinds: Promise<GroupVersion> }>(
    DISCOVERY_CACHE_ENTRIES,
  );

  /** `maxAgeMs`: how long one answer serves (default DISCOVERY_MAX_AGE_MS); `now`: clock in ms. */
  constructor(transport: KubeTransport, maxAgeMs = DISCOVERY_MAX_AGE_MS, now: () => number = Date.now) {
    this.#transport = transport;
    this.#maxAgeMs = maxAgeMs;
    this.#now = now;
  }

  /**
   * What `kind` of `apiVersion` is, from the group-version's discovery answer (read at most
   * once per DISCOVERY_MAX_AGE_MS; a failed read is not kept, so the next call asks again).
   * Rejects with the request's error (Forbidden, a timeout, an answer over DISCOVERY_MAX_BYTES).
   */
  async find(apiVersion: string, kind: string): Promise<ScalableKind> {
    const kinds = await this.#kinds(apiVersion);
    const found = kinds.get(kind);
    const name = `${kind} (${apiVersion})`;
    if (found === undefined)
      return {
        ok: false,
        reason: 'NotServed',
        message: `the API server serves no kind ${name}`,
      };
    if (!found.namespaced)
      return {
        ok: false,
        reason: 'ClusterScoped',
        message: `${name} is cluster-scoped; a target lives in a namespace`,
      };
    if (!found.scalable)
      return { ok: false, reason: 'NotScalable', message: `${name} does not serve the /scale subresource` };
    return { ok: true, resource: { ...groupVersion(apiVersion), plural: found.plural, namespaced: true } };
  }

  /**
   * The resource of namespaced `kind` of `apiVersion`, with /scale or not (an owner between a
   * pod and its target), or undefined when discovery finds none; cached and rejecting as find.
   */
  async resource(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    const found = (await this.#kinds(apiVersion)).get(kind);
    if (found === undefined || !found.namespaced) return undefined;
    return { ...groupVersion(apiVersion), plural: found.plural, namespaced: true };
  }

  #kinds(apiVersion: string): Promise<GroupVersion> {
    if (apiVersion.length > API_VERSION_MAX_LENGTH || !API_VERSION.test(apiVersion))
      return Promise.resolve(new Map());
    const now = this.#now();
    const kept = this.#cache.get(apiVersion);
    if (kept !== undefined && now - kept.at < this.#maxAgeMs) return kept.kinds;
    const answer = this.#transport.request<unknown>({
      path: pathOf(apiVersion),
      maxResponseBytes: DISCOVERY_MAX_BYTES,
      timeoutMs: DISCOVERY_TIMEOUT_MS,
    });
    const kinds = answer.then(kindsOf, (err: unknown) => {
      if (err instanceof NotFoundError) return new Map() as GroupVersion;
      throw err;
    });
    this.#cache.set(apiVersion, { at: now, kinds });
    kinds.catch(() => {
      if (this.#cache.get(apiVersion)?.kinds === kinds) this.#cache.delete(apiVersion);
    });
    return kinds;
  }
}
