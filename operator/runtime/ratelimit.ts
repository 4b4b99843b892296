// Retry pacing for the work queue, as client-go's DefaultControllerRateLimiter but fair
// across namespaces: the larger of a per-key exponential backoff and a token bucket of the
// key's namespace (namespace-buckets.ts), so one namespace's failing keys wait on their own
// bucket and never on another's. An overall bucket caps the retries of all namespaces
// together; it is charged only when a retry comes due (the queue asks `admit`), never
// reserved ahead, so a namespace with a thousand failing keys holds at most its own rate of
// it and the other namespaces' retries find tokens. The buckets only pace retries (errors),
// never the normal requeue-after polling. The buckets are lib/token-bucket.ts's.

import { namespaceOf } from '../../lib/keys.ts';
import { refill, tokenWait, type Bucket, type Pace } from '../../lib/token-bucket.ts';
import { NamespaceBuckets } from './namespace-buckets.ts';

/** Share of the overall retry rate and burst one namespace gets by default: a fifth. */
const NAMESPACE_SHARE = 5;

/** Options of RateLimiter; the overall defaults are client-go's. */
export interface RateLimiterOptions {
  /** First per-key delay in ms (default 5). Doubles on every retry of the key. */
  readonly baseDelayMs?: number;
  /** Cap of the per-key delay in ms (default 1 000 000 = 1000 s). */
  readonly maxDelayMs?: number;
  /** Retries per second of all namespaces together, taken as they come due (default 10). */
  readonly qps?: number;
  /** Overall burst (default 100). */
  readonly burst?: number;
  /** Retries per second of one namespace (default a fifth of `qps`: 2). */
  readonly namespaceQps?: number;
  /** Burst of one namespace (default a fifth of `burst`, at least 1: 20). */
  readonly namespaceBurst?: number;
  /** Clock in ms (default Date.now); injectable for tests. */
  readonly now?: () => number;
}

/** max(per-key exponential backoff, the key's namespace bucket), then the overall bucket at the due time. */
export class RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #base: number;
  readonly #max: number;
  readonly #pace: Pace;
  readonly #now: () => number;
  readonly #total: Bucket;
  readonly #namespaces: NamespaceBuckets;

  constructor(opts: RateLimiterOptions = {}) {
    this.#base = opts.baseDelayMs ?? 5;
    this.#max = opts.maxDelayMs ?? 1_000_000;
    this.#pace = { ratePerSecond: opts.qps ?? 10, burst: opts.burst ?? 100 };
    this.#now = opts.now ?? Date.now;
    if (!(this.#pace.ratePerSecond > 0) || !(this.#pace.burst >= 1))
      throw new Error('rate limiter needs qps > 0 and burst >= 1');
    this.#total = { tokens: this.#pace.burst, at: this.#now() };
    this.#namespaces = new NamespaceBuckets(
      opts.namespaceQps ?? this.#pace.ratePerSecond / NAMESPACE_SHARE,
      opts.namespaceBurst ?? Math.max(1, Math.floor(this.#pace.burst / NAMESPACE_SHARE)),
      this.#now,
    );
  }

  /**
   * Records a retry of `key` and returns how long to wait before it, in ms: its backoff, or
   * longer while its namespace's bucket is spent (a token reserved ahead in that bucket only).
   * When the wait is over the queue asks `admit` before queueing the key.
   */
  when(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    const backoff = Math.min(this.#base * 2 ** n, this.#max);
    return Math.max(backoff, this.#namespaces.reserve(namespaceOf(key)));
  }

  /**
   * For a retry that is due now: takes a token of the overall bucket and returns 0 when it
   * holds one, else returns the wait in ms until it will and takes nothing (ask again then).
   */
  admit(): number {
    refill(this.#total, this.#pace, this.#now());
    const wait = tokenWait(this.#total, this.#pace);
    if (wait === 0) this.#total.tokens -= 1;
    return wait;
  }

  /** Retries recorded for `key`. */
  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Forgets `key`'s failures; its next retry starts at the base delay again. */
  forget(key: string): void {
    this.#failures.delete(key);
  }
}
