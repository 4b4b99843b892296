// Retry pacing for the work queue, as client-go's DefaultControllerRateLimiter: the larger
// of a per-key exponential backoff and an overall token bucket. The bucket only paces
// retries (errors), never the normal requeue-after polling. The bucket is lib/token-bucket.ts's.

import { reserve, type Bucket, type Pace } from '../../lib/token-bucket.ts';

/** Options of RateLimiter; the defaults are client-go's. */
export interface RateLimiterOptions {
  /** First per-key delay in ms (default 5). Doubles on every retry of the key. */
  readonly baseDelayMs?: number;
  /** Cap of the per-key delay in ms (default 1 000 000 = 1000 s). */
  readonly maxDelayMs?: number;
  /** Overall retries per second (default 10). */
  readonly qps?: number;
  /** Overall burst (default 100). */
  readonly burst?: number;
  /** Clock in ms (default Date.now); injectable for tests. */
  readonly now?: () => number;
}

/** max(per-key exponential backoff, token bucket). */
export class RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #base: number;
  readonly #max: number;
  readonly #pace: Pace;
  readonly #now: () => number;
  readonly #bucket: Bucket;

  constructor(opts: RateLimiterOptions = {}) {
    this.#base = opts.baseDelayMs ?? 5;
    this.#max = opts.maxDelayMs ?? 1_000_000;
    this.#pace = { ratePerSecond: opts.qps ?? 10, burst: opts.burst ?? 100 };
    this.#now = opts.now ?? Date.now;
    if (!(this.#pace.ratePerSecond > 0) || !(this.#pace.burst >= 1))
      throw new Error('rate limiter needs qps > 0 and burst >= 1');
    this.#bucket = { tokens: this.#pace.burst, at: this.#now() };
  }

  /** Records a retry of `key` and returns how long to wait before it, in ms. */
  when(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    const backoff = Math.min(this.#base * 2 ** n, this.#max);
    return Math.max(backoff, reserve(this.#bucket, this.#pace, this.#now()));
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
