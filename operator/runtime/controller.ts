// Runs reconciles off the work queue: `maxConcurrentReconciles` workers, each taking one key
// at a time (the queue guarantees a key is never on two workers, and is told how many
// workers there are, so a namespace holds at most its fair share of them while others
// wait). Success → forget the key's backoff and requeue after the reconciler's interval;
// error → rate-limited retry (5 ms → 1000 s per key, a token bucket per namespace so one
// namespace's failing keys never delay another's, and an overall cap taken as retries come
// due: ratelimit.ts); an error no retry can fix (terminal.ts) → tried again only after a
// long wait, never on the hot backoff. A conflict (409: the object changed since it was read,
// which anyone who may write it can cause, its status writers included) is retried the same
// rate-limited way but counted as a requeue, not an error, so no tenant's writes move the
// reconcile error ratio. Whatever a reconcile throws (any value, synchronously or not) or returns is that
// key's error or result: it never ends a worker or the process. Stopping lets in-flight
// reconciles finish. After a burst, once the queue is idle, one full collection hands the
// burst's garbage back (release.ts).

import { ConflictError } from '../../lib/kube/errors.ts';
import { TERMINAL_RETRY_MS, terminalFailure } from './terminal.ts';
import type { Logger } from '../../lib/log.ts';
import { LogOnce } from '../../lib/log-once.ts';
import type { ControllerMetrics, ReconcileResult } from './metrics.ts';
import type { WorkQueue } from './workqueue.ts';
import { IdleRelease } from './release.ts';

/** The message of anything thrown: an Error's message, else its string form (never throws itself). */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    return 'unprintable error';
  }
}

/**
 * The kind of a thrown error for grouping repeated log lines: its class name (a closed set:
 * the classes of our code and Node's), `thrown` for a non-Error.
 */
function errorKind(err: unknown): string {
  return err instanceof Error ? err.constructor.name : 'thrown';
}

/** What a reconcile asks the controller to do next. */
export interface Result {
  /** Evaluate again after this many ms (unset: only on the next change). */
  readonly requeueAfterMs?: number;
}

/**
 * Whether `err` is a programming error (TypeError, RangeError, ReferenceError): what a Go
 * reconciler would panic on, counted in controller_runtime_reconcile_panics_total.
 */
export function isPanic(err: unknown): boolean {
  return err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError;
}

/** controller_runtime_reconcile_total's result for what a reconcile returned, as controller-runtime labels it. */
export function resultLabel(result: Result | undefined): ReconcileResult {
  const after = result?.requeueAfterMs;
  if (typeof after !== 'number' || !Number.isFinite(after)) return 'success';
  return after > 0 ? 'requeue_after' : 'requeue';
}

/** Options of Controller. */
export interface ControllerOptions {
  readonly queue: WorkQueue;
  readonly reconcile: (key: string) => Promise<Result>;
  /** The controller_runtime_* series (metrics.ts's controllerMetrics). */
  readonly metrics: ControllerMetrics;
  readonly log: Logger;
  /** Parallel workers (default 1, as controller-runtime). */
  readonly maxConcurrentReconciles?: number;
  /** Wait in ms before a key whose reconcile failed terminally is tried again (default TERMINAL_RETRY_MS, 10 min). */
  readonly terminalRetryMs?: number;
  /** Told after every reconcile whether the queue went idle (default: a new IdleRelease). */
  readonly release?: IdleRelease;
}

/** The worker pool. */
export class Controller {
  readonly #o: ControllerOptions;
  readonly #release: IdleRelease;
  readonly #failures = new LogOnce();
  #workers: Promise<void>[] = [];

  constructor(opts: ControllerOptions) {
    this.#o = opts;
    this.#release = opts.release ?? new IdleRelease();
  }

  /** Starts the workers (idempotent). */
  start(): void {
    if (this.#workers.length > 0) return;
    const n = this.#o.maxConcurrentReconciles ?? 1;
    this.#o.queue.setWorkers(n);
    this.#o.metrics.started(n);
    this.#release.soon();
    this.#workers = Array.from({ length: n }, () => this.#work());
  }

  /** Shuts the queue down and waits for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.#o.queue.shutDown();
    await Promise.all(this.#workers);
    this.#release.stop();
  }

  async #work(): Promise<void> {
    const { queue, metrics, log } = this.#o;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      metrics.workerBusy();
      const start = performance.now();
      const seconds = (): number => (performance.now() - start) / 1000;
      try {
        const result = (await this.#o.reconcile(key)) as Result | undefined;
        metrics.reconciled(seconds(), resultLabel(result));
        queue.forget(key);
        const after = result?.requeueAfterMs;
        if (typeof after === 'number' && Number.isFinite(after)) queue.requeueAfter(key, Math.max(0, after));
      } catch (err) {
        const terminal = terminalFailure(err) !== undefined;
        if (err instanceof ConflictError) metrics.reconciled(seconds(), 'requeue');
        else metrics.reconciled(seconds(), 'error', { terminal, panic: isPanic(err) });
        const fields = { key, error: errorText(err), retries: queue.retries(key) };
        // One line per key and kind of error per minute: a task that keeps failing the same
        // way retries with backoff without filling the log.
        const once =
          err instanceof ConflictError
            ? { log: false as const }
            : this.#failures.check(key, `${terminal ? 'terminal' : 'retry'}:${errorKind(err)}`);
        const said =
          once.log && once.suppressed > 0 ? { ...fields, repeatedSinceLastLine: once.suppressed } : fields;
        if (err instanceof ConflictError) log.debug('reconcile conflict, retrying', fields);
        else if (!once.log) log.debug('reconcile failed again, retrying', fields);
        else if (terminal) log.error('reconcile failed; no retry can fix this, trying again later', said);
        else log.warn('reconcile failed, retrying', said);
        if (terminal) {
          queue.forget(key);
          queue.addAfter(key, this.#o.terminalRetryMs ?? TERMINAL_RETRY_MS);
        } else queue.addRateLimited(key);
      } finally {
        metrics.workerIdle();
        queue.done(key);
        this.#release.reconciled(queue.depth === 0 && queue.inFlight === 0);
      }
    }
  }
}
