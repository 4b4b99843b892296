// Memory that comes back after a burst: V8 keeps a burst's old-generation garbage (the
// parsed watch events, request and response bodies of a thousand reconciles) resident
// until its next full collection, which an otherwise quiet operator may not run for a long
// time. So once at least BURST_RECONCILES reconciles have finished since the last check and
// the queue is idle (nothing queued, nothing in flight), the old generation is measured, and
// only when it grew by GROWTH_BYTES or more since the last collection does one full
// collection run RELEASE_DELAY_MS later (lib/full-gc.ts). A steady trickle of reconciles
// (thousands of AITasks evaluated every interval) goes idle every few reconciles, so counting
// alone ran a full collection every few seconds, each marking the whole heap to free little:
// the growth test makes every forced collection free at least GROWTH_BYTES, and lets V8's
// own collections, which keep the old generation down on a trickle, make it unneeded. At most
// one is pending at a time. One also runs when the workers start, for the start-up's own
// garbage, whatever the growth.

import { getHeapSpaceStatistics } from 'node:v8';
import { fullCollection } from '../../lib/full-gc.ts';

/** Reconciles between two measurements of the heap while the queue goes idle. */
export const BURST_RECONCILES = 100;
/** Wait in ms between the queue going idle and the collection. */
export const RELEASE_DELAY_MS = 1000;
/** Growth of the old generation since the last collection, in bytes, that makes one worth running. */
export const GROWTH_BYTES = 16 * 1024 * 1024;

/** Bytes in use in V8's old generation: every heap space but the young generation's. */
export function oldGenerationBytes(): number {
  let used = 0;
  for (const s of getHeapSpaceStatistics()) if (!s.space_name.startsWith('new_')) used += s.space_used_size;
  return used;
}

/** Options of IdleRelease (for tests; the defaults are the constants above, fullCollection and oldGenerationBytes). */
export interface IdleReleaseOptions {
  /** The full collection; default fullCollection (undefined: none, a no-op). */
  readonly gc?: (() => void) | undefined;
  readonly burst?: number;
  readonly delayMs?: number;
  readonly growthBytes?: number;
  /** The heap measured against growthBytes, in bytes. */
  readonly heapBytes?: () => number;
}

/** Runs one full collection after a burst of reconciles that grew the heap, once the queue is idle. */
export class IdleRelease {
  readonly #gc: (() => void) | undefined;
  readonly #burst: number;
  readonly #delayMs: number;
  readonly #growthBytes: number;
  readonly #heapBytes: () => number;
  #since = 0;
  /** heapBytes() right after the last collection (0 before the first). */
  #afterLast = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: IdleReleaseOptions = {}) {
    this.#gc = 'gc' in opts ? opts.gc : fullCollection;
    this.#burst = opts.burst ?? BURST_RECONCILES;
    this.#delayMs = opts.delayMs ?? RELEASE_DELAY_MS;
    this.#growthBytes = opts.growthBytes ?? GROWTH_BYTES;
    this.#heapBytes = opts.heapBytes ?? oldGenerationBytes;
  }

  /**
   * Called after every reconcile; `idle`: nothing is queued or in flight any more. Every
   * `burst` reconciles, on an idle queue, the heap is measured; a collection follows when it
   * grew by growthBytes since the last one.
   */
  reconciled(idle: boolean): void {
    this.#since += 1;
    if (!idle || this.#since < this.#burst || this.#gc === undefined) return;
    this.#since = 0;
    if (this.#heapBytes() - this.#afterLast >= this.#growthBytes) this.soon();
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
      this.#afterLast = this.#heapBytes();
    }, this.#delayMs);
    this.#timer.unref();
  }

  /** Cancels a pending collection (on stop). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
