// The token bucket, the one copy: a Bucket refilled at a Pace (refill), from which a caller
// takes tokens now or reserves one ahead and waits (reserve); the work queue's namespace
// buckets and its retry limiter use it as it is. On top of it, token buckets per remote
// address, for whatever a listener paces per peer: what anyone who
// reaches a port may make the process spend on its behalf (the operator's TokenReviews for
// made-up bearer tokens on /metrics, the conversion webhook's CPU time). A bucket per remote
// address (refilled at `ratePerSecond`, holding at most `burst`) paces each peer; the
// buckets live in a map of at most `addresses` entries, least recently touched first out, and
// only a bucket that has refilled (so is as good as new) is ever dropped. When every kept
// bucket is still draining, further new addresses share one overflow bucket: many peers at
// once get one peer's pace between them, never a fresh burst each. A cost known only after
// the fact (time spent) is charged into debt (charge), which the bucket pays back at its rate
// before the address may spend again. The pace of every bucket may change (setPace: a
// caller that splits a total between the addresses using it). Pure; the clock is passed in.

/** Pace and bounds of an AddressPacer. */
export interface PacerLimits {
  /** Tokens added to a bucket per second. */
  readonly ratePerSecond: number;
  /** Most tokens a bucket holds: what an idle peer may spend at once. */
  readonly burst: number;
  /** Most addresses with a bucket of their own (at least 1). */
  readonly addresses: number;
}

/** A token bucket's state: the tokens it holds (negative: reserved ahead) as of `at` (ms). */
export interface Bucket {
  tokens: number;
  at: number;
}

/** The pace of a bucket: tokens added per second, and the most it holds. */
export interface Pace {
  readonly ratePerSecond: number;
  readonly burst: number;
}

/**
 * Brings `bucket` to `now` (ms): the tokens added since `at` at `pace`, at most `burst`. A
 * clock that steps back adds nothing and leaves `at` where it was.
 */
export function refill(bucket: Bucket, pace: Pace, now: number): void {
  const elapsed = Math.max(0, now - bucket.at);
  bucket.tokens = Math.min(pace.burst, bucket.tokens + (elapsed * pace.ratePerSecond) / 1000);
  bucket.at = Math.max(bucket.at, now);
}

/** The wait in ms until `bucket` (refilled to its time) holds a whole token; 0 when it does. */
export function tokenWait(bucket: Bucket, pace: Pace): number {
  return bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) / pace.ratePerSecond) * 1000;
}

/**
 * Takes one token of `bucket` at `now` (ms), into debt when it holds none: the token is
 * reserved ahead. Returns the wait in ms until that token is due (0: at once).
 */
export function reserve(bucket: Bucket, pace: Pace, now: number): number {
  refill(bucket, pace, now);
  const wait = tokenWait(bucket, pace);
  bucket.tokens -= 1;
  return wait;
}

/** Token buckets per remote address within a bounded map (see the header). */
export class AddressPacer {
  #limits: PacerLimits;
  readonly #buckets = new Map<string, Bucket>();
  #overflow: Bucket;

  constructor(limits: PacerLimits) {
    this.#limits = { ...limits, addresses: Math.max(1, limits.addresses) };
    this.#overflow = { tokens: limits.burst, at: 0 };
  }

  /**
   * Whether `address` may spend `cost` tokens (default 1) at `now` (ms); true spends them. A
   * refusal costs nothing and the caller retries no earlier than the tokens missing take to
   * come back (at `ratePerSecond`).
   */
  take(address: string, now: number, cost = 1): boolean {
    const bucket = this.#bucket(address, now);
    this.#refill(bucket, now);
    if (bucket.tokens < cost) return false;
    bucket.tokens -= cost;
    return true;
  }

  /** The tokens `address` holds at `now` (ms): negative while it pays back a charge. */
  balance(address: string, now: number): number {
    const bucket = this.#bucket(address, now);
    this.#refill(bucket, now);
    return bucket.tokens;
  }

  /** Spends `cost` tokens of `address` at `now` (ms), into debt if it holds fewer. */
  charge(address: string, now: number, cost: number): void {
    const bucket = this.#bucket(address, now);
    this.#refill(bucket, now);
    bucket.tokens -= cost;
  }

  /**
   * Refills every bucket at `pace` from its next use on (the time since a bucket's last use
   * counts at the new pace); a bucket holding more than the new burst is cut to it then.
   */
  setPace(pace: Pace): void {
    this.#limits = { ...this.#limits, ratePerSecond: pace.ratePerSecond, burst: pace.burst };
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
    refill(bucket, this.#limits, now);
  }
}
