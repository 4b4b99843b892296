// Token buckets keyed by namespace, for whatever one namespace's keys may spend apart from
// another's: the work queue's event-triggered adds (workqueue.ts) and the retries of failed
// reconciles (ratelimit.ts). Each namespace has its own bucket (lib/token-bucket.ts); a
// bucket that has refilled is dropped, so the map holds only namespaces recently busy.

import { refill, reserve, tokenWait, type Bucket, type Pace } from '../../lib/token-bucket.ts';

/**
 * Token buckets keyed by namespace (lib/token-bucket.ts): `qps` tokens a second up to
 * `burst`. A bucket back at `burst` is dropped, so the map holds only namespaces that were
 * recently busy.
 */
export class NamespaceBuckets {
  readonly #pace: Pace;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  /** `qps` > 0 tokens a second, `burst` ≥ 1; `now` in ms (default Date.now). */
  constructor(qps: number, burst: number, now: () => number = Date.now) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error('namespace buckets need qps > 0 and burst >= 1');
    this.#pace = { ratePerSecond: qps, burst };
    this.#now = now;
  }

  /** The bucket of `namespace` brought to now: a full one when it has none. */
  #bucket(namespace: string): Bucket {
    const now = this.#now();
    const b = this.#buckets.get(namespace) ?? { tokens: this.#pace.burst, at: now };
    refill(b, this.#pace, now);
    return b;
  }

  /** The wait in ms a reservation in `namespace` would get now, without taking a token. */
  wait(namespace: string): number {
    const b = this.#buckets.get(namespace);
    if (b === undefined) return 0;
    const copy = { ...b };
    refill(copy, this.#pace, this.#now());
    return tokenWait(copy, this.#pace);
  }

  /** Takes one token of `namespace` (possibly one in the future); returns the wait in ms until it is due. */
  reserve(namespace: string): number {
    const b = this.#bucket(namespace);
    const wait = reserve(b, this.#pace, b.at);
    this.#buckets.set(namespace, b);
    for (const [ns, other] of this.#buckets)
      if (
        ns !== namespace &&
        other.tokens + ((b.at - other.at) / 1000) * this.#pace.ratePerSecond >= this.#pace.burst
      )
        this.#buckets.delete(ns);
    return wait;
  }
}
