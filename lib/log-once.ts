// A warning that repeats for the same object and reason (a conversion refused on every list
// and watch, a stash ignored on every read) is worth one line per interval, not one per
// request: a console that scrolls hundreds of identical lines hides the one a person must
// read. LogOnce decides which lines go out and counts those it held back, so the next line
// for that key says how many it stands for. Its table is bounded by construction: past
// `maxKeys` distinct keys, new keys share one overflow key per reason, so a peer that names a
// new object in every request still gets at most one line per reason per interval.

/** What LogOnce says about one occurrence. */
export type LogVerdict =
  | {
      readonly log: true;
      /** Occurrences of this key held back since its last line. */ readonly suppressed: number;
    }
  | { readonly log: false };

/** How often a repeated key is logged again by default: 60 000 ms. */
export const LOG_ONCE_INTERVAL_MS = 60_000;
/** Distinct keys remembered by default before new ones share the overflow key: 1 024. */
export const LOG_ONCE_MAX_KEYS = 1_024;

interface Entry {
  last: number;
  suppressed: number;
}

/** One line per (object, reason) per interval; see the module comment. */
export class LogOnce {
  readonly #entries = new Map<string, Entry>();
  readonly #intervalMs: number;
  readonly #maxKeys: number;

  /**
   * @param intervalMs how long a key stays quiet after its line (default LOG_ONCE_INTERVAL_MS)
   * @param maxKeys distinct (object, reason) keys remembered (default LOG_ONCE_MAX_KEYS)
   */
  constructor(intervalMs = LOG_ONCE_INTERVAL_MS, maxKeys = LOG_ONCE_MAX_KEYS) {
    this.#intervalMs = intervalMs;
    this.#maxKeys = maxKeys;
  }

  /** Whether an occurrence of `reason` for `object` at `now` (ms) is logged. */
  check(object: string, reason: string, now = Date.now()): LogVerdict {
    let key = `${reason}\u0000${object}`;
    if (!this.#entries.has(key) && this.#entries.size >= this.#maxKeys) {
      this.#sweep(now);
      if (this.#entries.size >= this.#maxKeys) key = `${reason}\u0000*`;
    }
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#entries.set(key, { last: now, suppressed: 0 });
      return { log: true, suppressed: 0 };
    }
    if (now - entry.last < this.#intervalMs) {
      entry.suppressed++;
      return { log: false };
    }
    const suppressed = entry.suppressed;
    entry.last = now;
    entry.suppressed = 0;
    return { log: true, suppressed };
  }

  /** Keys remembered now (at most maxKeys plus one overflow key per reason). */
  get size(): number {
    return this.#entries.size;
  }

  /** Forgets keys whose last line is an interval old (their held-back count goes with them). */
  #sweep(now: number): void {
    for (const [k, e] of this.#entries) if (now - e.last >= this.#intervalMs) this.#entries.delete(k);
  }
}
