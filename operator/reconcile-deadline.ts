// The deadline of one reconcile: RECONCILE_DEADLINE_MS after it starts, a reconcile that has
// not begun to act ends with a retryable error and frees its worker, whatever it waits on
// (pods of a target that are slow to list, owners, a slow apiserver). Its signal aborts the
// outbound calls that take one (Prometheus), and every write it would still make checks the
// deadline first, so a reconcile left behind writes nothing. Once the decision to act is about
// to be written (`commit`), the reconcile is no longer cut: write, action and outcome go
// together, each bounded by its own request's timeout, so an action is never left unrecorded;
// a deleted task's cleanup (finalize.ts, bounded by its own 30 s) is not cut either.
// An LLM call, bounded on its own by --llm-max-timeout, moves the deadline out by its bound
// (`extend`): the advisor's fallback, not the deadline, ends a call that does not answer.

import type { Spend } from './reconcile-budget.ts';

/** What one reconcile spends (reconcile-budget.ts) and by when it ends. */
export interface Run {
  readonly spend: Spend;
  readonly deadline: ReconcileDeadline;
}

/** Longest a reconcile holds a worker before it acts, in ms: 10 s. */
export const RECONCILE_DEADLINE_MS = 10_000;

/** The retryable error of a reconcile past its deadline (the controller retries it with backoff). */
export class DeadlineExceeded extends Error {
  /** The deadline passed, in ms. */
  readonly ms: number;

  constructor(ms: number) {
    super(`the reconcile did not finish within ${ms / 1000}s; retried with backoff`);
    this.ms = ms;
  }
}

/** One reconcile's deadline (see the header). */
export class ReconcileDeadline {
  readonly #ms: number;
  readonly #abort = new AbortController();
  #committed = false;
  /** When the deadline passes (ms, Date.now), and what `run` does then; set by `run`. */
  #at = 0;
  #arm: (() => void) | undefined;

  /** `ms`: the bound (default RECONCILE_DEADLINE_MS, 10 s). */
  constructor(ms = RECONCILE_DEADLINE_MS) {
    this.#ms = ms;
  }

  /** Aborted once the deadline passed before `commit`. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Throws DeadlineExceeded once the deadline passed: called before every write. */
  check(): void {
    if (this.#abort.signal.aborted) throw new DeadlineExceeded(this.#ms);
  }

  /** From here on the reconcile is not cut (it acts); throws when the deadline already passed. */
  commit(): void {
    this.check();
    this.#committed = true;
  }

  /** Moves the deadline `ms` later (a call bounded on its own, the LLM's, is about to be made). */
  extend(ms: number): void {
    this.#at += ms;
    this.#arm?.();
  }

  /** `work`'s result, or DeadlineExceeded once the deadline passes before `commit`. */
  async run<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    this.#at = Date.now() + this.#ms;
    const late = new Promise<never>((_, reject) => {
      this.#arm = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () => {
            if (this.#committed) return;
            this.#abort.abort();
            reject(new DeadlineExceeded(this.#ms));
          },
          Math.max(0, this.#at - Date.now()),
        );
      };
      this.#arm();
    });
    late.catch(() => undefined);
    work.catch(() => undefined);
    try {
      return await Promise.race([work, late]);
    } finally {
      this.#arm = undefined;
      clearTimeout(timer);
    }
  }
}
