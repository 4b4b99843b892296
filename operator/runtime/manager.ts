// A manager of runnables, as controller-runtime's: every long-lived part of a process (caches,
// controllers, leader election, servers, timers) is a Runnable that runs until its signal
// aborts, and the order in which the parts start and stop is data on each of them, so it can
// be read in one place and tested without a cluster. A part starts once the parts it starts
// after have said they run; on stop, a part is told to stop once the parts it stops after
// have stopped, and parts that wait on nothing stop at once, side by side. The first part to
// fail (its run rejects before the manager stops) is reported, and the caller decides how the
// process ends. No I/O of its own.

/** Why the manager stops, as seen by every part's signal (`signal.reason`). */
export interface StopReason {
  /**
   * How long a part that answers traffic a load balancer still routes here keeps answering
   * before it closes, in ms (0: close at once).
   */
  readonly drainMs: number;
}

/** The StopReason a part's aborted signal carries (no drain for any other reason). */
export function stopReason(signal: AbortSignal): StopReason {
  const r: unknown = signal.reason;
  return typeof r === 'object' && r !== null && 'drainMs' in r && typeof r.drainMs === 'number'
    ? { drainMs: r.drainMs }
    : { drainMs: 0 };
}

/** A long-lived part of the process. */
export interface Runnable {
  /** Unique among the manager's parts; other parts name it in their orders. */
  readonly name: string;
  /** Parts that must run (have called `ready`) before this one starts. */
  readonly startAfter?: readonly string[];
  /** Parts that must have stopped before this one is told to stop. */
  readonly stopAfter?: readonly string[];
  /**
   * Runs the part: calls `ready` once it runs (a server listening), then runs until `signal`
   * aborts (its reason a StopReason), stops, and resolves. Rejecting before the signal
   * aborts is a failure the manager reports; resolving early is a part whose work is done.
   */
  run(signal: AbortSignal, ready: () => void): Promise<void>;
}

/** The first part that failed, and how. */
export interface Failure {
  readonly name: string;
  readonly error: Error;
}

interface Slot {
  readonly runnable: Runnable;
  readonly abort: AbortController;
  readonly running: Promise<void>;
  readonly markRunning: () => void;
  done: Promise<void> | undefined;
}

/** Throws unless every order names a known part and the stop orders have no cycle. */
export function checkOrders(runnables: readonly Runnable[]): void {
  const names = new Set<string>();
  for (const r of runnables) {
    if (names.has(r.name)) throw new Error(`two runnables are named ${r.name}`);
    names.add(r.name);
  }
  for (const r of runnables)
    for (const other of [...(r.startAfter ?? []), ...(r.stopAfter ?? [])])
      if (!names.has(other)) throw new Error(`${r.name} is ordered after ${other}, which is not added`);
  for (const key of ['startAfter', 'stopAfter'] as const) {
    const state = new Map<string, 'visiting' | 'done'>();
    const byName = new Map(runnables.map((r) => [r.name, r]));
    const visit = (name: string, path: readonly string[]): void => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting')
        throw new Error(`${key} has a cycle: ${[...path, name].join(' → ')}`);
      state.set(name, 'visiting');
      for (const next of byName.get(name)?.[key] ?? []) visit(next, [...path, name]);
      state.set(name, 'done');
    };
    for (const r of runnables) visit(r.name, []);
  }
}

/** Starts and stops a process' runnables in their orders (see the header). */
export class Manager {
  readonly #slots = new Map<string, Slot>();
  #stopping: Promise<void> | undefined;
  #fail: (f: Failure) => void = () => undefined;
  /** Settles with the first part that fails before the manager stops; never otherwise. */
  readonly failed = new Promise<Failure>((resolve) => (this.#fail = resolve));
  readonly #onStopError: (name: string, error: Error) => void;

  /** `onStopError`: told of a part that rejects while stopping (default: ignored). */
  constructor(onStopError: (name: string, error: Error) => void = () => undefined) {
    this.#onStopError = onStopError;
  }

  /** Adds a part; only before start. */
  add(runnable: Runnable): this {
    let markRunning = (): void => undefined;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    this.#slots.set(runnable.name, {
      runnable,
      abort: new AbortController(),
      running,
      markRunning,
      done: undefined,
    });
    return this;
  }

  /** Whether stop has been called. */
  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  /** Starts every part in its start order; throws when the orders are inconsistent. */
  start(): void {
    checkOrders([...this.#slots.values()].map((s) => s.runnable));
    for (const slot of this.#slots.values()) {
      const after = (slot.runnable.startAfter ?? []).map((n) => this.#slot(n).running);
      // A part still waiting for others when the manager stops never starts.
      const stopped = new Promise<void>((resolve) =>
        slot.abort.signal.addEventListener('abort', () => resolve()),
      );
      slot.done =
        after.length === 0
          ? this.#run(slot)
          : Promise.race([Promise.all(after), stopped]).then(() => this.#run(slot));
    }
  }

  /** Stops every part in its stop order; resolves when all have stopped. Idempotent. */
  stop(reason: StopReason = { drainMs: 0 }): Promise<void> {
    this.#stopping ??= (async () => {
      const stopped = new Map<string, Promise<void>>();
      const stopOf = (slot: Slot): Promise<void> => {
        let p = stopped.get(slot.runnable.name);
        if (p === undefined) {
          const after = (slot.runnable.stopAfter ?? []).map((n) => stopOf(this.#slot(n)));
          p = Promise.all(after).then(async () => {
            slot.abort.abort(reason);
            await slot.done;
          });
          stopped.set(slot.runnable.name, p);
        }
        return p;
      };
      await Promise.all([...this.#slots.values()].map(stopOf));
    })();
    return this.#stopping;
  }

  #slot(name: string): Slot {
    const slot = this.#slots.get(name);
    if (slot === undefined) throw new Error(`no runnable named ${name}`);
    return slot;
  }

  async #run(slot: Slot): Promise<void> {
    const { signal } = slot.abort;
    // Read after the run settles: the manager may have stopped it meanwhile.
    const stopped = (): boolean => signal.aborted;
    if (stopped()) return;
    try {
      await slot.runnable.run(signal, slot.markRunning);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (stopped()) this.#onStopError(slot.runnable.name, error);
      else this.#fail({ name: slot.runnable.name, error });
    }
  }
}
