// The controller's work queue with client-go semantics: keys (namespace/name) are
// de-duplicated, a key is never handed to two workers at once (a key added while it is
// processed is re-queued when the worker is done), delayed adds, and rate-limited retries
// (per-key exponential backoff combined with an overall token bucket).

import { RateLimiter } from './ratelimit.ts';

/** Options of WorkQueue. */
export interface WorkQueueOptions {
  /** Limiter for `addRateLimited`; default `new RateLimiter()` (5 ms → 1000 s, 10 qps / burst 100). */
  readonly limiter?: RateLimiter;
}

/** A de-duplicating, delaying, rate-limited queue of string keys. */
export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #limiter: RateLimiter;
  #shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.#limiter = opts.limiter ?? new RateLimiter();
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  get depth(): number {
    return this.#queue.length;
  }

  /** Keys being processed right now. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /** Queues `key` now; a no-op when it is already queued. A key in flight is queued again once done. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      waiter(key);
    } else this.#queue.push(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending delay for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.#timers.set(key, { at, timer });
  }

  /** Queues `key` after the limiter's delay for it (the retry path after an error). */
  addRateLimited(key: string): void {
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Clears `key`'s retry history (after a successful reconcile). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** Retries recorded for `key` since the last `forget`. */
  retries(key: string): number {
    return this.#limiter.retries(key);
  }

  /** Waits for the next key; resolves `undefined` once the queue shuts down. Call `done(key)` after. */
  get(): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile it goes back on the queue. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      this.add(key);
    }
  }

  /** Stops handing out keys: waiting `get` calls resolve `undefined`, delayed adds are dropped. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#dirty.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
}
