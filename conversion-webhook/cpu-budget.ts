// Conversion time, per remote address and in all. Converting runs on the one thread the host
// process (the operator) reconciles and answers its probes on, and anyone who reaches the port
// can send reviews that are valid and large (a 7.6 MB review takes over a second), back to
// back, from as many addresses as it has pods. So conversion time is budgeted twice, as token
// buckets of milliseconds (lib/token-bucket.ts): a review is converted only while both its
// address's balance and the total's are positive, and the time it took is charged to both
// after (into debt: one review is never cut short). A review refused by either is answered 429
// with Retry-After (the seconds that debt takes to pay back), which the apiserver's client
// honours and retries.
// - The total (`totalMsPerSecond`, at most `totalBurstMs` at once) bounds what all addresses
//   together take from the thread, however many there are: what is left is the reconciler's.
// - The total is split in n + 1 parts, n the addresses that asked for conversion in the last
//   ACTIVE_WINDOW_MS: each earns min(`msPerSecond`, total / (n + 1)) and holds at most
//   min(`burstMs`, totalBurst / (n + 1)), so what they can hold and earn together stays below
//   the total by one part: the total is not kept in debt for whoever asks first the moment it
//   pays back, and the apiserver, whose reviews are rare and small (a LIST page of 500 objects
//   in ~35 ms), finds room beside addresses converting back to back (64 of them in
//   cpu-budget.test.ts's simulation). Each address has a bucket of its own that no other
//   address can spend. A new address's first review may overrun its part once, which the
//   total still bounds.
// - A review waits until the total holds the time a review of its size is expected to take
//   (REVIEW_MS_PER_MIB), so while large reviews keep the total low, the apiserver's small ones
//   are let in first, as the total pays back; against small reviews sent as fast, it is one
//   address among them.
// Pure bookkeeping; the clock is passed in.

import { AddressPacer, refill, type Bucket, type Pace } from '../lib/token-bucket.ts';

/**
 * Default conversion time one address may use, in milliseconds per second: 250, a quarter of
 * the thread. The apiserver converts a LIST page of 500 objects in ~35 ms and keeps each
 * object's conversion in its watch cache, so its own reviews stay far below.
 */
export const DEFAULT_CPU_MS_PER_SECOND = 250;

/**
 * Default most conversion time an idle address may use at once, in milliseconds: 2,500,
 * two of the largest reviews (8 MiB, ~1.2 s each) back to back.
 */
export const DEFAULT_CPU_BURST_MS = 2_500;

/**
 * Default conversion time all addresses together may use, in milliseconds per second: 500,
 * half the thread (two addresses at their own pace); the other half stays the reconciler's
 * and the probes'.
 */
export const DEFAULT_CPU_TOTAL_MS_PER_SECOND = 500;

/** Default most conversion time all addresses together may use at once, in milliseconds: 5,000, two idle addresses' bursts. */
export const DEFAULT_CPU_TOTAL_BURST_MS = 5_000;

/** Default addresses with a bucket of their own: 1,024; beyond, new ones share one (lib/token-bucket.ts). */
export const DEFAULT_CPU_ADDRESSES = 1_024;

/**
 * How long an address counts as using the total after its last charged review, in ms: 10 s,
 * the time a default burst takes to come back at the default rate.
 */
export const ACTIVE_WINDOW_MS = 10_000;

/**
 * Conversion time a review is expected to take per MiB of body, in ms: 150, the slowest
 * measured (an 8 MiB review of small objects takes ~1.2 s; docs/benchmarks.md). Only what a
 * review waits for in the total; the time it took is what is charged.
 */
export const REVIEW_MS_PER_MIB = 150;

const MIB = 1024 * 1024;

/** The pace of conversion time, per address and in all. */
export interface CpuLimits {
  /** Milliseconds of conversion an address earns per second (> 0), when few addresses share the total. */
  readonly msPerSecond: number;
  /** Most milliseconds an idle address holds, when few addresses share the total. */
  readonly burstMs: number;
  /** Milliseconds of conversion all addresses together earn per second (> 0). */
  readonly totalMsPerSecond: number;
  /** Most milliseconds all addresses together hold. */
  readonly totalBurstMs: number;
  /** Addresses with a bucket of their own (at least 1). */
  readonly addresses: number;
}

/** Why a review may not be converted now, and when to retry. */
export interface CpuRefusal {
  /** `address`: the address is in debt; `total`: all addresses together are. */
  readonly share: 'address' | 'total';
  /** Whole seconds (at least 1) until that debt is paid back, for Retry-After. */
  readonly retryAfterSeconds: number;
}

/** The answer to a refused review: the Status message, the failure reason it is counted under, its Retry-After. */
export function describeCpuRefusal(refusal: CpuRefusal): {
  readonly message: string;
  readonly reason: 'cpu_share' | 'cpu_total';
  readonly headers: { readonly 'Retry-After': string };
} {
  const wait = refusal.retryAfterSeconds;
  return refusal.share === 'address'
    ? {
        message: `this address has used its share of conversion time; retry in ${wait} s`,
        reason: 'cpu_share',
        headers: { 'Retry-After': String(wait) },
      }
    : {
        message: `all callers together have used the webhook's conversion time; retry in ${wait} s`,
        reason: 'cpu_total',
        headers: { 'Retry-After': String(wait) },
      };
}

/** Conversion time per remote address and in all (see the header). */
export class CpuBudget {
  readonly #limits: CpuLimits;
  readonly #pacer: AddressPacer;
  readonly #total: Bucket;
  readonly #totalPace: Pace;
  /** Addresses charged in the last ACTIVE_WINDOW_MS, by their last charge (ms), oldest first. */
  readonly #active = new Map<string, number>();
  #pace: Pace;
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (default performance.now). */
  constructor(limits: CpuLimits, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#pace = { ratePerSecond: limits.msPerSecond, burst: limits.burstMs };
    this.#pacer = new AddressPacer({ ...this.#pace, addresses: limits.addresses });
    this.#totalPace = { ratePerSecond: limits.totalMsPerSecond, burst: limits.totalBurstMs };
    this.#now = now;
    this.#total = { tokens: limits.totalBurstMs, at: now() };
  }

  /**
   * Undefined when `peer` may have a review of `bytes` converted now; else which budget lacks
   * time and how long until it holds it: the address's balance must be positive, the total's
   * must hold what a review of `bytes` is expected to take (REVIEW_MS_PER_MIB, at most the
   * total's burst), and be positive.
   */
  refusal(peer: string, bytes: number): CpuRefusal | undefined {
    const now = this.#now();
    this.#touch(peer, now);
    const own = this.#pacer.balance(peer, now);
    if (own <= 0) return { share: 'address', retryAfterSeconds: seconds(-own, this.#pace.ratePerSecond) };
    refill(this.#total, this.#totalPace, now);
    const need = Math.min(this.#limits.totalBurstMs, (Math.max(0, bytes) / MIB) * REVIEW_MS_PER_MIB);
    const short = need - this.#total.tokens;
    if (this.#total.tokens <= 0 || short > 0)
      return { share: 'total', retryAfterSeconds: seconds(short, this.#totalPace.ratePerSecond) };
    return undefined;
  }

  /** Charges `ms` of conversion time to `peer` and to the total. */
  charge(peer: string, ms: number): void {
    const now = this.#now();
    const cost = Math.max(0, ms);
    this.#touch(peer, now);
    this.#pacer.charge(peer, now, cost);
    refill(this.#total, this.#totalPace, now);
    this.#total.tokens -= cost;
  }

  /** Addresses that asked for conversion time in the last ACTIVE_WINDOW_MS (at most `addresses`). */
  get active(): number {
    return this.#active.size;
  }

  /**
   * Counts `peer` as asking for conversion time at `now`, forgets addresses that asked for none
   * in ACTIVE_WINDOW_MS, and sets every address's pace to its part of the total: split between
   * the addresses asking and one more.
   */
  #touch(peer: string, now: number): void {
    this.#active.delete(peer);
    if (this.#active.size < this.#limits.addresses) this.#active.set(peer, now);
    for (const [address, at] of this.#active) {
      if (now - at < ACTIVE_WINDOW_MS) break;
      this.#active.delete(address);
    }
    const n = this.#active.size + 1;
    this.#pace = {
      ratePerSecond: Math.min(this.#limits.msPerSecond, this.#limits.totalMsPerSecond / n),
      burst: Math.min(this.#limits.burstMs, this.#limits.totalBurstMs / n),
    };
    this.#pacer.setPace(this.#pace);
  }
}

/** Whole seconds (at least 1) that `debt` ms take to pay back at `rate` ms per second. */
function seconds(debt: number, rate: number): number {
  return Math.max(1, Math.ceil(debt / rate));
}
