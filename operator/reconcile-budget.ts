// What one reconcile may spend, charged to the namespace that caused it. A reconcile due by
// its task's own interval (or by a requeue the operator itself asked for) spends freely: its
// cost is one evaluation per interval, which the inventory states per task. Any other
// trigger (an annotation, a spec edit, the operator's own patch, a retry) is "off-interval"
// and pays each outbound call (a Prometheus query, an apiserver read or write, an Event, an
// LLM call) with a token of its namespace's bucket: NAMESPACE_CALLS_PER_MINUTE a minute, up
// to NAMESPACE_CALLS_BURST at once. An optional call (a fresh metric read, an Event of an
// ignored approval, removing that annotation) is skipped when no token is there; a call the
// reconcile cannot go on without defers the whole reconcile until a token is due, before
// anything is written. Whatever a tenant writes in a loop, the operator's work for it past
// the interval stays within its namespace's bucket.

import { NamespaceBuckets } from './runtime/namespace-buckets.ts';

/** Outbound calls per minute an off-interval reconcile may spend in one namespace: 60 (one a second). */
export const NAMESPACE_CALLS_PER_MINUTE = 60;

/** Outbound calls of one namespace's off-interval reconciles let through at once: 20. */
export const NAMESPACE_CALLS_BURST = 20;

/**
 * How early before its due time a reconcile still counts as due, in ms (500): the requeue
 * timer is set a moment after the due time is recorded, never before it.
 */
export const DUE_SLACK_MS = 500;

/** Thrown by Spend.must when a reconcile off its interval has no token: nothing was written; try again after `waitMs`. */
export class Deferred extends Error {
  readonly waitMs: number;

  constructor(namespace: string, waitMs: number) {
    super(`namespace ${namespace} spent its reconcile budget; deferred ${waitMs} ms`);
    this.waitMs = waitMs;
  }
}

/** The per-namespace buckets of off-interval calls. */
export class ReconcileBudget {
  readonly #buckets: NamespaceBuckets;

  /**
   * `perMinute` calls a minute of each namespace (default NAMESPACE_CALLS_PER_MINUTE, 60),
   * `burst` at once (default NAMESPACE_CALLS_BURST, 20); `now` in ms (default Date.now).
   */
  constructor(
    perMinute = NAMESPACE_CALLS_PER_MINUTE,
    burst = NAMESPACE_CALLS_BURST,
    now: () => number = Date.now,
  ) {
    this.#buckets = new NamespaceBuckets(perMinute / 60, burst, now);
  }

  /** Charges `calls` to `namespace` after the fact (into debt: the bucket pays them back first). */
  charge(namespace: string, calls: number): void {
    for (let i = 0; i < calls; i++) this.#buckets.reserve(namespace);
  }

  /** What one reconcile of a task of `namespace` spends; `due`: it runs by the task's interval. */
  spend(namespace: string, due: boolean): Spend {
    return new Spend(this.#buckets, namespace, due);
  }
}

/** One reconcile's spending (see the header). */
export class Spend {
  readonly #buckets: NamespaceBuckets;
  readonly #namespace: string;
  /** True when the reconcile runs by its task's interval: nothing is charged. */
  readonly due: boolean;
  /** Set once a `must` was granted: the reconcile writes, and finishes what it writes. */
  #committed = false;

  constructor(buckets: NamespaceBuckets, namespace: string, due: boolean) {
    this.#buckets = buckets;
    this.#namespace = namespace;
    this.due = due;
  }

  /** An optional call: true (a token taken) when due or a token is there now; false: skip it. */
  may(): boolean {
    if (this.due) return true;
    if (this.#buckets.wait(this.#namespace) > 0) return false;
    this.#buckets.reserve(this.#namespace);
    return true;
  }

  /**
   * `calls` calls the reconcile cannot go on without. Due: free. Otherwise the first such of
   * a reconcile needs a token now, else throws Deferred (nothing has been written); after
   * it, the reconcile is committed and its further calls are charged ahead (the bucket pays
   * them back before the namespace spends again).
   */
  must(calls = 1): void {
    if (this.due) return;
    if (!this.#committed) {
      const wait = this.#buckets.wait(this.#namespace);
      if (wait > 0) throw new Deferred(this.#namespace, wait);
      this.#committed = true;
    }
    for (let i = 0; i < calls; i++) this.#buckets.reserve(this.#namespace);
  }

  /** Ms until the namespace has a token again (0: now). */
  waitMs(): number {
    return this.#buckets.wait(this.#namespace);
  }
}
