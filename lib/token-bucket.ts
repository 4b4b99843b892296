// How often each peer may make the operator ask the apiserver something on its behalf. Anyone
// who reaches /metrics can send made-up bearer tokens, and each unknown token costs a
// TokenReview: without a per-peer pace one pod makes the operator's ServiceAccount send
// thousands a minute and fills the review slots the real scraper needs. A token bucket per
// remote address (refilled at `ratePerSecond`, holding at most `burst`) paces each peer; the
// buckets live in a map of at most `addresses` entries, least recently touched first out, and
// only a bucket that has refilled (so is as good as new) is ever dropped. When every kept
// bucket is still draining, further new addresses share one overflow bucket: many peers at
// once get one peer's pace between them, never a fresh burst each. Pure; the clock is passed in.

/** Pace and bounds of an AddressPacer. */
export interface PacerLimits {
  /** Tokens added to a bucket per second. */
  readonly ratePerSecond: number;
  /** Most tokens a bucket holds: what an idle peer may spend at once. */
  readonly burst: number;
  /** Most addresses with a bucket of their own (at least 1). */
  readonly addresses: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets per remote address within a bounded map (see the header). */
export class AddressPacer {
  readonly #limits: PacerLimits;
  readonly #buckets = new Map<string, Bucket>();
  #overflow: Bucket;

  constructor(limits: PacerLimits) {
    this.#limits = { ...limits, addresses: Math.max(1, limits.addresses) };
    this.#overflow = { tokens: limits.burst, at: 0 };
  }

  /**
   * Whether `address` may spend one token at `now` (ms); true spends it. A refusal costs
   * nothing and the caller retries no earlier than the next token (1000 / ratePerSecond ms).
   */
  take(address: string, now: number): boolean {
    const bucket = this.#bucket(address, now);
    this.#refill(bucket, now);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Addresses with a bucket of their own (at most `limits.addresses`). */
  get size(): number {
    return this.#buckets.size;
  }

  #bucket(address: string, now: number): Bucket {
    const own = this.#buckets.get(address);
    if (own !== undefined) {
      this.#buckets.delete(address);
      this.#buckets.set(address, own);
      return own;
    }
    if (this.#buckets.size >= this.#limits.addresses) {
      const oldest = this.#buckets.entries().next();
      if (oldest.done === true) return this.#overflow;
      const [name, bucket] = oldest.value;
      this.#refill(bucket, now);
      if (bucket.tokens < this.#limits.burst) return this.#overflow;
      this.#buckets.delete(name);
    }
    const fresh = { tokens: this.#limits.burst, at: now };
    this.#buckets.set(address, fresh);
    return fresh;
  }

  #refill(bucket: Bucket, now: number): void {
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(
      this.#limits.burst,
      bucket.tokens + (elapsed * this.#limits.ratePerSecond) / 1000,
    );
    bucket.at = Math.max(bucket.at, now);
  }
}
