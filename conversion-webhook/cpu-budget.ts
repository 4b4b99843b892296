// Conversion time per remote address. Converting runs on the one thread the host process
// (the operator) reconciles and answers its probes on, and anyone who reaches the port can
// send reviews that are valid and large (a 7.6 MB review takes over a second), back to back.
// So each address has a budget of milliseconds of conversion: a token bucket
// (lib/token-bucket.ts) refilled at `msPerSecond`, holding at most `burstMs`. A review is
// converted while its address's balance is positive, and the time it took is charged after
// (into debt: one review is never cut short); an address in debt is answered 429 with
// Retry-After (the seconds its debt takes to pay back), which the apiserver's client honours
// and retries. The apiserver is one address among the others and has a bucket of its own,
// which no other address can spend: it keeps its share whatever they send. Pure bookkeeping;
// the clock is passed in.

import { AddressPacer } from '../lib/token-bucket.ts';

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

/** Default addresses with a bucket of their own: 1,024; beyond, new ones share one (lib/token-bucket.ts). */
export const DEFAULT_CPU_ADDRESSES = 1_024;

/** The pace of conversion time per address. */
export interface CpuLimits {
  /** Milliseconds of conversion an address earns per second (> 0). */
  readonly msPerSecond: number;
  /** Most milliseconds an idle address holds. */
  readonly burstMs: number;
  /** Addresses with a bucket of their own (at least 1). */
  readonly addresses: number;
}

/** Conversion time per remote address (see the header). */
export class CpuBudget {
  readonly #pacer: AddressPacer;
  readonly #rate: number;
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (default performance.now). */
  constructor(limits: CpuLimits, now: () => number = () => performance.now()) {
    this.#rate = limits.msPerSecond;
    this.#pacer = new AddressPacer({
      ratePerSecond: limits.msPerSecond,
      burst: limits.burstMs,
      addresses: limits.addresses,
    });
    this.#now = now;
  }

  /**
   * 0 when `peer` may have a review converted now; else the whole seconds (at least 1) until
   * its balance is positive again, for Retry-After.
   */
  retryAfterSeconds(peer: string): number {
    const balance = this.#pacer.balance(peer, this.#now());
    if (balance > 0) return 0;
    return Math.max(1, Math.ceil(-balance / this.#rate));
  }

  /** Charges `ms` of conversion time to `peer`. */
  charge(peer: string, ms: number): void {
    this.#pacer.charge(peer, this.#now(), Math.max(0, ms));
  }
}
