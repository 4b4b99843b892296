// Memory that comes back after a burst: V8 keeps a burst's old-generation garbage (the
// parsed watch events, request and response bodies of a thousand reconciles) resident
// until its next full collection, which an otherwise quiet operator may not run for a long
// time. So once at least BURST_RECONCILES reconciles have finished since the last
// collection and the queue is idle (nothing queued, nothing in flight), one full collection
// runs RELEASE_DELAY_MS later (api/full-gc.ts). At most one is pending at a time, so a steady
// trickle of reconciles gets one per BURST_RECONCILES of them, never one per reconcile. One
// also runs when the workers start, for the start-up's own garbage.

import { fullCollection } from '../../api/full-gc.ts';

/** Reconciles since the last collection before an idle queue triggers one. */
export const BURST_RECONCILES = 100;
/** Wait in ms between the queue going idle and the collection. */
export const RELEASE_DELAY_MS = 1000;

/** Options of IdleRelease (for tests; the defaults are the constants above and fullCollection). */
export interface IdleReleaseOptions {
  /** The full collection; default fullCollection (undefined: none, a no-op). */
  readonly gc?: (() => void) | undefined;
  readonly burst?: number;
  readonly delayMs?: number;
}

/** Runs one full collection after a burst of reconciles once the queue is idle. */
export class IdleRelease {
  readonly #gc: (() => void) | undefined;
  readonly #burst: number;
  readonly #delayMs: number;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: IdleReleaseOptions = {}) {
    this.#gc = 'gc' in opts ? opts.gc : fullCollection;
    this.#burst = opts.burst ?? BURST_RECONCILES;
    this.#delayMs = opts.delayMs ?? RELEASE_DELAY_MS;
  }

  /** Called after every reconcile; `idle`: nothing is queued or in flight any more. */
  reconciled(idle: boolean): void {
    this.#since += 1;
    if (idle && this.#since >= this.#burst) this.soon();
  }

  /**
   * One collection RELEASE_DELAY_MS from now unless one is pending: called when the workers
   * start, so the start-up's garbage (the bundle's compiled source, the first LISTs) is
   * handed back even when no burst ever comes.
   */
  soon(): void {
    const gc = this.#gc;
    if (gc === undefined || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#since = 0;
      gc();
    }, this.#delayMs);
    this.#timer.unref();
  }

  /** Cancels a pending collection (on stop). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
