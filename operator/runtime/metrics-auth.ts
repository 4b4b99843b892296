// Who may read /metrics, decided by the cluster as controller-runtime's
// `filters.WithAuthenticationAndAuthorization` decides it: the request's bearer token goes to
// a TokenReview, the user it names to a SubjectAccessReview for the non-resource URL and the
// request's verb (`get` on `/metrics`, what the `aiops-metrics-reader` ClusterRole grants).
// Anyone who reaches the port can send tokens, so:
// - results are cached by the token's SHA-256, never the token (authentication 1 min, allowed
//   5 min, denied 30 s, as controller-runtime), in bounded maps that keep successes apart from
//   failures: a flood of made-up tokens churns the failure maps and never evicts a success;
// - a token that was granted once (the scraper's) stays known after its TTL and is reviewed
//   again in a lane of its own (maxRenewalsInFlight), so a flood never refuses it;
// - every other review is paced per remote address (a token bucket, lib/token-bucket.ts) and at
//   most maxReviewsInFlight run at once: beyond either the request is answered 429 and nothing
//   reaches the apiserver;
// - oversized headers are refused without a review.

import { createHash } from 'node:crypto';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import { LruMap } from '../../lib/lru-map.ts';
import { AddressPacer } from '../../lib/token-bucket.ts';

/** What the filter answers: 200 lets the request through, anything else is sent as is. */
export type MetricsAccess =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly code: 401 | 403 | 429 | 500; readonly message: string };

/** TTLs (ms), bounds (entries, reviews) and paces, controller-runtime's where it has one. */
export const METRICS_AUTH_LIMITS = {
  authenticatedTtlMs: 60_000,
  unauthenticatedTtlMs: 10_000,
  allowTtlMs: 300_000,
  denyTtlMs: 30_000,
  /** Entries of each failure map and of the map of authenticated users not (yet) allowed. */
  cacheEntries: 1024,
  /** Tokens granted once, kept (past their TTL too) so their reviews take the renewal lane. */
  grantedEntries: 256,
  /** Reviews in flight for tokens not granted before; the rest get 429. */
  maxReviewsInFlight: 8,
  /** Reviews in flight for tokens granted before (the renewal lane). */
  maxRenewalsInFlight: 4,
  /** Reviews per second each remote address may cause for tokens not granted before. */
  reviewsPerSecondPerAddress: 4,
  /** Reviews one remote address may cause at once after a quiet spell (its bucket's size). */
  reviewBurstPerAddress: 8,
  /** Remote addresses paced apart; beyond, new ones share one pace (lib/token-bucket.ts). */
  pacedAddresses: 4096,
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

/** A cached review result and the time (ms) it goes stale. */
interface Expiring<V> {
  readonly value: V;
  readonly until: number;
}

/** The value of `key` in `map` while fresh at `now`; a stale entry is dropped. */
function fresh<V>(map: LruMap<string, Expiring<V>>, key: string, now: number): V | undefined {
  const e = map.get(key);
  if (e === undefined) return undefined;
  if (e.until > now) return e.value;
  map.delete(key);
  return undefined;
}

/** Which reviews a request may cause: a token granted before renews, any other is a stranger's. */
type Lane = { readonly kind: 'renewal' } | { readonly kind: 'stranger'; readonly address: string };

/** Decides access to the metrics endpoint by TokenReview and SubjectAccessReview (see the header). */
export class MetricsAuthorizer {
  readonly #transport: KubeTransport;
  readonly #now: () => number;
  readonly #granted = new LruMap<string, Expiring<ReviewedUser>>(METRICS_AUTH_LIMITS.grantedEntries);
  readonly #authenticated = new LruMap<string, Expiring<ReviewedUser>>(METRICS_AUTH_LIMITS.cacheEntries);
  readonly #unauthenticated = new LruMap<string, Expiring<string>>(METRICS_AUTH_LIMITS.cacheEntries);
  readonly #allowed = new LruMap<string, Expiring<true>>(METRICS_AUTH_LIMITS.grantedEntries);
  readonly #denied = new LruMap<string, Expiring<true>>(METRICS_AUTH_LIMITS.cacheEntries);
  readonly #pacer = new AddressPacer({
    ratePerSecond: METRICS_AUTH_LIMITS.reviewsPerSecondPerAddress,
    burst: METRICS_AUTH_LIMITS.reviewBurstPerAddress,
    addresses: METRICS_AUTH_LIMITS.pacedAddresses,
  });
  readonly #inFlight = { renewal: 0, stranger: 0 };

  constructor(transport: KubeTransport, now: () => number = Date.now) {
    this.#transport = transport;
    this.#now = now;
  }

  /** Entries of each cache and paced addresses, for the tests of the bounds. */
  get cached(): {
    readonly granted: number;
    readonly authenticated: number;
    readonly unauthenticated: number;
    readonly allowed: number;
    readonly denied: number;
    readonly addresses: number;
  } {
    return {
      granted: this.#granted.size,
      authenticated: this.#authenticated.size,
      unauthenticated: this.#unauthenticated.size,
      allowed: this.#allowed.size,
      denied: this.#denied.size,
      addresses: this.#pacer.size,
    };
  }

  /**
   * The access of a request from `remote` (the peer's IP address; default '', one pace for
   * all callers that give none) with `authorization` (its Authorization header) to `path`
   * with HTTP `method`. Review failures (apiserver unreachable, refused) answer 500 and are
   * not cached, so the next scrape asks again; a review refused by pace or slots answers 429.
   */
  async check(
    authorization: string | undefined,
    method: string,
    path: string,
    remote = '',
  ): Promise<MetricsAccess> {
    if (authorization === undefined || authorization.length === 0)
      return { allowed: false, code: 401, message: 'Unauthorized: no bearer token' };
    if (Buffer.byteLength(authorization) > METRICS_AUTH_LIMITS.maxHeaderBytes)
      return { allowed: false, code: 401, message: 'Unauthorized: Authorization header too long' };
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m === null) return { allowed: false, code: 401, message: 'Unauthorized: not a bearer token' };
    const token = m[1] ?? '';
    const key = createHash('sha256').update(token).digest('hex');
    const verb = method.toLowerCase();
    const lane: Lane =
      this.#granted.get(key) !== undefined ? { kind: 'renewal' } : { kind: 'stranger', address: remote };
    try {
      const user = await this.#authenticate(key, token, lane);
      if (typeof user === 'string') return { allowed: false, code: 401, message: `Unauthorized: ${user}` };
      const allowed = await this.#authorize(key, `${key} ${verb} ${path}`, user, verb, path, lane);
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

  async #authenticate(key: string, token: string, lane: Lane): Promise<ReviewedUser | string> {
    const now = this.#now();
    const granted = this.#granted.get(key);
    if (granted !== undefined && granted.until > now) return granted.value;
    const known = granted === undefined ? fresh(this.#authenticated, key, now) : undefined;
    if (known !== undefined) return known;
    const refused = granted === undefined ? fresh(this.#unauthenticated, key, now) : undefined;
    if (refused !== undefined) return refused;
    const review = await this.#review<TokenReview>(lane, '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const status = review.status;
    const until = this.#now();
    if (status?.authenticated === true && status.user !== undefined) {
      const user = status.user;
      if (granted !== undefined)
        this.#granted.set(key, { value: user, until: until + METRICS_AUTH_LIMITS.authenticatedTtlMs });
      else
        this.#authenticated.set(key, { value: user, until: until + METRICS_AUTH_LIMITS.authenticatedTtlMs });
      return user;
    }
    const reason = 'the token is not valid for this cluster';
    this.#granted.delete(key);
    this.#unauthenticated.set(key, {
      value: reason,
      until: until + METRICS_AUTH_LIMITS.unauthenticatedTtlMs,
    });
    return reason;
  }

  async #authorize(
    key: string,
    decision: string,
    user: ReviewedUser,
    verb: string,
    path: string,
    lane: Lane,
  ): Promise<boolean> {
    const now = this.#now();
    if (fresh(this.#allowed, decision, now) === true) return true;
    if (fresh(this.#denied, decision, now) === true) return false;
    const review = await this.#review<SubjectAccessReview>(
      lane,
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
    const at = this.#now();
    const authn = this.#granted.get(key) ?? this.#authenticated.get(key);
    const authnUntil = authn?.until ?? at + METRICS_AUTH_LIMITS.authenticatedTtlMs;
    if (review.status?.allowed === true) {
      this.#allowed.set(decision, { value: true, until: at + METRICS_AUTH_LIMITS.allowTtlMs });
      this.#authenticated.delete(key);
      this.#granted.set(key, { value: user, until: authnUntil });
      return true;
    }
    this.#denied.set(decision, { value: true, until: at + METRICS_AUTH_LIMITS.denyTtlMs });
    if (this.#granted.get(key) !== undefined) {
      this.#granted.delete(key);
      this.#authenticated.set(key, { value: user, until: authnUntil });
    }
    return false;
  }

  async #review<T>(lane: Lane, path: string, body: unknown): Promise<T> {
    const limit =
      lane.kind === 'renewal'
        ? METRICS_AUTH_LIMITS.maxRenewalsInFlight
        : METRICS_AUTH_LIMITS.maxReviewsInFlight;
    if (this.#inFlight[lane.kind] >= limit)
      throw new Busy(`Too Many Requests: ${limit} token or access reviews in flight`);
    if (lane.kind === 'stranger' && !this.#pacer.take(lane.address, this.#now()))
      throw new Busy(
        `Too Many Requests: reviews caused by one address are paced to ${METRICS_AUTH_LIMITS.reviewsPerSecondPerAddress}/s`,
      );
    this.#inFlight[lane.kind]++;
    try {
      return await this.#transport.request<T>({ method: 'POST', path, body, timeoutMs: 10_000 });
    } finally {
      this.#inFlight[lane.kind]--;
    }
  }
}

class Busy extends Error {}
