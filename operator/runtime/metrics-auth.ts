// Who may read /metrics, decided by the cluster as controller-runtime's
// `filters.WithAuthenticationAndAuthorization` decides it: the request's bearer token goes to
// a TokenReview, the user it names to a SubjectAccessReview for the non-resource URL and the
// request's verb (`get` on `/metrics`, what the `aiops-metrics-reader` ClusterRole grants).
// Anyone who reaches the port can send tokens, so results are cached by the token's SHA-256
// in bounded maps (authentication 1 min, allowed 5 min, denied 30 s, as controller-runtime),
// oversized headers are refused without a review, and at most MAX_REVIEWS_IN_FLIGHT reviews
// run at once: beyond that the request is answered 429 and nothing reaches the apiserver.

import { createHash } from 'node:crypto';
import type { KubeTransport } from '../../api/kube/transport.ts';

/** What the filter answers: 200 lets the request through, anything else is sent as is. */
export type MetricsAccess =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly code: 401 | 403 | 429 | 500; readonly message: string };

/** TTLs and bounds (ms, entries), controller-runtime's where it has one. */
export const METRICS_AUTH_LIMITS = {
  authenticatedTtlMs: 60_000,
  unauthenticatedTtlMs: 10_000,
  allowTtlMs: 300_000,
  denyTtlMs: 30_000,
  cacheEntries: 1024,
  maxReviewsInFlight: 8,
  /** Longest Authorization header looked at; the apiserver's own tokens are well under 8 KiB. */
  maxHeaderBytes: 8192,
} as const;

interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

interface TokenReview {
  readonly status?: {
    readonly authenticated?: boolean;
    readonly user?: ReviewedUser;
    readonly error?: string;
  };
}

interface SubjectAccessReview {
  readonly status?: { readonly allowed?: boolean; readonly reason?: string };
}

/** A map of at most `max` entries that expire; the oldest insert goes first when full. */
class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string, now: number): V | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (e.until > now) return e.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, until: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, until });
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Decides access to the metrics endpoint by TokenReview and SubjectAccessReview (see the header). */
export class MetricsAuthorizer {
  readonly #transport: KubeTransport;
  readonly #now: () => number;
  readonly #users = new ExpiringCache<ReviewedUser | string>(METRICS_AUTH_LIMITS.cacheEntries);
  readonly #decisions = new ExpiringCache<boolean>(METRICS_AUTH_LIMITS.cacheEntries);
  #inFlight = 0;

  constructor(transport: KubeTransport, now: () => number = Date.now) {
    this.#transport = transport;
    this.#now = now;
  }

  /** Cached users and decisions, for the tests of the bounds. */
  get cached(): { readonly users: number; readonly decisions: number } {
    return { users: this.#users.size, decisions: this.#decisions.size };
  }

  /**
   * The access of a request with `authorization` (its Authorization header) to `path` with
   * HTTP `method`. Review failures (apiserver unreachable, refused) answer 500 and are not
   * cached, so the next scrape asks again.
   */
  async check(authorization: string | undefined, method: string, path: string): Promise<MetricsAccess> {
    if (authorization === undefined || authorization.length === 0)
      return { allowed: false, code: 401, message: 'Unauthorized: no bearer token' };
    if (Buffer.byteLength(authorization) > METRICS_AUTH_LIMITS.maxHeaderBytes)
      return { allowed: false, code: 401, message: 'Unauthorized: Authorization header too long' };
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m === null) return { allowed: false, code: 401, message: 'Unauthorized: not a bearer token' };
    const token = m[1] ?? '';
    const key = createHash('sha256').update(token).digest('hex');
    const verb = method.toLowerCase();
    try {
      const user = await this.#authenticate(key, token);
      if (typeof user === 'string') return { allowed: false, code: 401, message: `Unauthorized: ${user}` };
      const allowed = await this.#authorize(`${key} ${verb} ${path}`, user, verb, path);
      return allowed
        ? { allowed: true, user: user.username }
        : {
            allowed: false,
            code: 403,
            message: `Forbidden: user "${user.username}" may not ${verb} ${path} (bind it the aiops-metrics-reader ClusterRole)`,
          };
    } catch (err) {
      if (err instanceof Busy) return { allowed: false, code: 429, message: err.message };
      return { allowed: false, code: 500, message: `authorization failed: ${(err as Error).message}` };
    }
  }

  async #authenticate(key: string, token: string): Promise<ReviewedUser | string> {
    const now = this.#now();
    const cached = this.#users.get(key, now);
    if (cached !== undefined) return cached;
    const review = await this.#review<TokenReview>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const status = review.status;
    const user =
      status?.authenticated === true && status.user !== undefined
        ? status.user
        : 'the token is not valid for this cluster';
    const ttl =
      typeof user === 'string'
        ? METRICS_AUTH_LIMITS.unauthenticatedTtlMs
        : METRICS_AUTH_LIMITS.authenticatedTtlMs;
    this.#users.set(key, user, now + ttl);
    return user;
  }

  async #authorize(key: string, user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const now = this.#now();
    const cached = this.#decisions.get(key, now);
    if (cached !== undefined) return cached;
    const review = await this.#review<SubjectAccessReview>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid !== undefined ? { uid: user.uid } : {}),
          ...(user.groups !== undefined ? { groups: user.groups } : {}),
          ...(user.extra !== undefined ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb },
        },
      },
    );
    const allowed = review.status?.allowed === true;
    this.#decisions.set(
      key,
      allowed,
      now + (allowed ? METRICS_AUTH_LIMITS.allowTtlMs : METRICS_AUTH_LIMITS.denyTtlMs),
    );
    return allowed;
  }

  async #review<T>(path: string, body: unknown): Promise<T> {
    if (this.#inFlight >= METRICS_AUTH_LIMITS.maxReviewsInFlight)
      throw new Busy(
        `Too Many Requests: ${METRICS_AUTH_LIMITS.maxReviewsInFlight} token or access reviews in flight`,
      );
    this.#inFlight++;
    try {
      return await this.#transport.request<T>({ method: 'POST', path, body, timeoutMs: 10_000 });
    } finally {
      this.#inFlight--;
    }
  }
}

class Busy extends Error {}
