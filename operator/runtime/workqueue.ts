// The controller's work queue with client-go semantics, fair across namespaces: keys
// (namespace/name) are de-duplicated, a key is never handed to two workers at once (a key
// added while it is processed is re-queued when the worker is done), delayed adds, and
// rate-limited retries (per-key exponential backoff, a token bucket per namespace, and an
// overall bucket taken as each retry comes due: ratelimit.ts).
// Each namespace has its own FIFO and `get` takes from the namespaces round-robin, so
// thousands of one namespace's keys never starve another's; and while another namespace has
// keys waiting, a namespace holds at most its fair share of the workers (fairShare), so one
// whose reconciles are slow does not keep every worker a freed one could give the others.
// Adds triggered by watch events (`addEvent`) go through a token bucket per namespace: the
// bucket of the namespace the event is charged to (the namespace of the object that changed,
// which may not be the key's), so one namespace's events never spend another's pace. Over its
// rate a key is queued after the bucket's delay instead of at once, never dropped.

import { namespaceOf } from '../../lib/keys.ts';
import type { QueueObserver } from './metrics.ts';
import { NamespaceBuckets } from './namespace-buckets.ts';
import { RateLimiter } from './ratelimit.ts';

/** Options of WorkQueue. */
export interface WorkQueueOptions {
  /** Limiter for `addRateLimited`; default `new RateLimiter()` (5 ms → 1000 s; 2 qps / burst 20 per namespace, 10 qps / burst 100 overall). */
  readonly limiter?: RateLimiter;
  /** Event-triggered adds per second of one namespace (`addEvent`); default 5. */
  readonly namespaceQps?: number;
  /** Event-triggered adds of one namespace let through at once before pacing; default 20. */
  readonly namespaceBurst?: number;
  /** Clock in ms for the namespace buckets (default Date.now); injectable for tests. */
  readonly now?: () => number;
  /** Told of adds, hand-outs, completions and retries (metrics.ts's WorkQueueMetrics); default none. */
  readonly observer?: QueueObserver;
}

/** A FIFO of keys with O(1) push and shift. */
class Fifo {
  #items: string[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(key: string): void {
    this.#items.push(key);
  }

  shift(): string | undefined {
    const key = this.#items[this.#head];
    if (key === undefined) return undefined;
    this.#head += 1;
    if (this.#head > 64 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}

/**
 * The most workers a namespace holds while another namespace has keys waiting: `workers`
 * shared evenly among the `busy` namespaces (those with keys queued or in flight), rounded
 * up, at least 1.
 */
export function fairShare(workers: number, busy: number): number {
  return Math.max(1, Math.ceil(workers / Math.max(1, busy)));
}

/** A de-duplicating, delaying, rate-limited queue of string keys, fair across namespaces. */
export class WorkQueue {
  /** Queued keys by namespace; a namespace is here only while it has keys. */
  readonly #queues = new Map<string, Fifo>();
  /** Namespaces with queued keys, in the order they are served next. */
  #ring = new Fifo();
  #depth = 0;
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** Keys in flight by namespace; a namespace is here only while it has some. */
  readonly #busy = new Map<string, number>();
  #workers = 1;
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout; due: boolean }>();
  /** Due times (ms) of keys a `requeueAfter` timer queued, until a worker takes them. */
  readonly #due = new Map<string, number>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #limiter: RateLimiter;
  readonly #buckets: NamespaceBuckets;
  readonly #now: () => number;
  readonly #observer: QueueObserver | undefined;
  #shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.#limiter = opts.limiter ?? new RateLimiter();
    this.#now = opts.now ?? Date.now;
    this.#observer = opts.observer;
    this.#buckets = new NamespaceBuckets(opts.namespaceQps ?? 5, opts.namespaceBurst ?? 20, this.#now);
  }

  /** Keys waiting to be processed (not counting delayed or in-flight keys). */
  get depth(): number {
    return this.#depth;
  }

  /** Keys being processed right now. */
  get inFlight(): number {
    return this.#processing.size;
  }

  /**
   * The workers taking keys (the Controller's, told when it starts; default 1): what each
   * namespace's fair share of them is reckoned from (fairShare).
   */
  setWorkers(workers: number): void {
    this.#workers = Math.max(1, Math.floor(workers));
  }

  /** Queues `key` now; a no-op when it is already queued. A key in flight is queued again once done. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#observer?.add(key);
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** Hands dirty `key` to a waiting worker, else queues it. */
  #push(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#handOut(key);
      waiter(key);
    } else this.#enqueue(key);
  }

  /** Marks `key` in flight; tells the observer, and how late it is when a requeue was due. */
  #handOut(key: string): void {
    this.#dirty.delete(key);
    this.#processing.add(key);
    const namespace = namespaceOf(key);
    this.#busy.set(namespace, (this.#busy.get(namespace) ?? 0) + 1);
    this.#observer?.get(key);
    const due = this.#due.get(key);
    if (due === undefined) return;
    this.#due.delete(key);
    this.#observer?.late?.(Math.max(0, this.#now() - due) / 1000);
  }

  /**
   * Queues `key` for a watch event (a patch, a target's change), paced by the bucket of
   * `charged`: the namespace of the object whose change this is (default the key's own). At
   * once while that bucket has a token, else after the bucket's delay; so the work one
   * namespace's events cause in another's keys is paid by the first. A key already queued,
   * or due from a delayed add no later than the bucket would allow, takes no token.
   */
  addEvent(key: string, charged: string = namespaceOf(key)): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    const pending = this.#timers.get(key);
    if (pending !== undefined && pending.at <= this.#now() + this.#buckets.wait(charged)) return;
    this.#addAfter(key, this.#buckets.reserve(charged), false);
  }

  /**
   * Queues `key` after `delayMs`; an earlier pending delay for the same key wins. Counted as a
   * retry (workqueue_retries_total), as client-go counts every AddAfter.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    this.#observer?.retry();
    this.#addAfter(key, delayMs, false);
  }

  /**
   * `addAfter` for the next evaluation a reconcile asked for: when its timer queues the key,
   * the observer is told at hand-out how late the worker took it against the due time
   * (`late`, in seconds; timer and queue delays together). An earlier pending delay still
   * wins, and then nothing is reported for it.
   */
  requeueAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    this.#observer?.retry();
    this.#addAfter(key, delayMs, true);
  }

  /**
   * Queues `key` after `delayMs` (an earlier pending delay wins). `due`: report how late it
   * is taken (requeueAfter). `paced`: a retry, which once due waits for the limiter's overall
   * bucket (`admit`) before it is queued.
   */
  #addAfter(key: string, delayMs: number, due: boolean, paced = false): void {
    if (this.#shuttingDown) return;
    const wait = delayMs <= 0 && paced ? this.#limiter.admit() : delayMs;
    if (wait <= 0) {
      this.add(key);
      return;
    }
    const at = this.#now() + wait;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      if (paced) {
        const more = this.#limiter.admit();
        if (more > 0) {
          this.#addAfter(key, more, due, true);
          return;
        }
      }
      if (due) this.#due.set(key, at);
      this.add(key);
    }, wait);
    timer.unref();
    this.#timers.set(key, { at, timer, due });
  }

  /**
   * Queues `key` after the limiter's delay for it (the retry path after an error: its backoff
   * and its namespace's bucket), then once a token of the overall bucket is free. Counted as a
   * retry (workqueue_retries_total).
   */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#observer?.retry();
    this.#addAfter(key, this.#limiter.when(key), false, true);
  }

  /** Clears `key`'s retry history (after a successful reconcile). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** Retries recorded for `key` since the last `forget`. */
  retries(key: string): number {
    return this.#limiter.retries(key);
  }

  /**
   * Waits for the next key, taking from the namespaces with queued keys in turn, skipping
   * one that holds its fair share of the workers (fairShare) while another is under it;
   * resolves `undefined` once the queue shuts down. Never leaves a key waiting while a worker
   * asks: when every namespace with keys holds its share, the one holding fewest is served.
   * Call `done(key)` after.
   */
  get(): Promise<string | undefined> {
    const key = this.#dequeue();
    if (key !== undefined) {
      this.#handOut(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile it goes back on the queue. */
  done(key: string): void {
    this.#observer?.done(key);
    if (this.#processing.delete(key)) {
      const namespace = namespaceOf(key);
      const held = (this.#busy.get(namespace) ?? 1) - 1;
      if (held > 0) this.#busy.set(namespace, held);
      else this.#busy.delete(namespace);
    }
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#push(key);
  }

  /** Stops handing out keys: waiting `get` calls resolve `undefined`, delayed adds are dropped. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#due.clear();
    this.#queues.clear();
    this.#ring = new Fifo();
    this.#depth = 0;
    this.#dirty.clear();
    this.#observer?.shutDown();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }

  #enqueue(key: string): void {
    const namespace = namespaceOf(key);
    let fifo = this.#queues.get(namespace);
    if (fifo === undefined) {
      fifo = new Fifo();
      this.#queues.set(namespace, fifo);
      this.#ring.push(namespace);
    }
    fifo.push(key);
    this.#depth += 1;
  }

  /** The keys in flight of `namespace`. */
  #held(namespace: string): number {
    return this.#busy.get(namespace) ?? 0;
  }

  /**
   * The namespace served next: the first in the ring holding less than its fair share, else
   * (every one holds its share) the first holding fewest. Namespaces passed over go to the
   * back of the ring. Each one passed over has keys in flight, so a call looks at no more
   * namespaces than twice the keys in flight, plus one.
   */
  #next(): string | undefined {
    const waiting = this.#ring.size;
    if (waiting <= 1) return this.#ring.shift();
    let busy = this.#queues.size;
    for (const namespace of this.#busy.keys()) if (!this.#queues.has(namespace)) busy += 1;
    const share = fairShare(this.#workers, busy);
    let fewest: string | undefined;
    for (let i = 0; i < waiting; i++) {
      const namespace = this.#ring.shift();
      if (namespace === undefined) return undefined;
      if (this.#held(namespace) < share) return namespace;
      this.#ring.push(namespace);
      if (fewest === undefined || this.#held(namespace) < this.#held(fewest)) fewest = namespace;
    }
    for (let i = 0; i < waiting; i++) {
      const namespace = this.#ring.shift();
      if (namespace === fewest) return namespace;
      if (namespace !== undefined) this.#ring.push(namespace);
    }
    return undefined;
  }

  /** The next namespace's oldest key (#next); that namespace goes to the back of the ring if it has more. */
  #dequeue(): string | undefined {
    const namespace = this.#next();
    if (namespace === undefined) return undefined;
    const fifo = this.#queues.get(namespace);
    const key = fifo?.shift();
    if (fifo === undefined || key === undefined) return undefined;
    if (fifo.size > 0) this.#ring.push(namespace);
    else this.#queues.delete(namespace);
    this.#depth -= 1;
    return key;
  }
}
