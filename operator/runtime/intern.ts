// One shared copy of each repeated string in the informer caches. JSON.parse gives every
// object its own copy of every value, so 10,000 cached AITasks hold 10,000 copies of
// "Monitoring", of each condition's type, reason and message, of equal timestamps and of the
// finalizer name: about a tenth of the cache. Interning them keeps one copy each.

/** Strings the pool holds before it starts over (default 50,000, at most ~10 MiB). */
export const DEFAULT_POOL_SIZE = 50_000;

/** Longer strings are left alone: rarely repeated, and the pool must not keep big ones alive. */
export const MAX_INTERNED_LENGTH = 200;

/**
 * A bounded intern table. When full it is emptied and refilled: strings interned before
 * stay shared by the objects that hold them, so memory stays bounded (no string is kept
 * alive by the pool beyond one generation) at the cost of a few copies per generation.
 */
export class StringPool {
  readonly #pool = new Map<string, string>();
  readonly #max: number;

  /** `max`: entries before the pool starts over (default DEFAULT_POOL_SIZE); must be ≥ 1. */
  constructor(max: number = DEFAULT_POOL_SIZE) {
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`string pool size must be a whole number ≥ 1, got ${max}`);
    this.#max = max;
  }

  /** Entries held now. */
  get size(): number {
    return this.#pool.size;
  }

  /** The canonical copy of `s` (`s` itself when longer than MAX_INTERNED_LENGTH). */
  intern(s: string): string {
    if (s.length > MAX_INTERNED_LENGTH) return s;
    const hit = this.#pool.get(s);
    if (hit !== undefined) return hit;
    if (this.#pool.size >= this.#max) this.#pool.clear();
    this.#pool.set(s, s);
    return s;
  }

  /**
   * Replaces, in place, every string value inside `value` (plain JSON data: objects and
   * arrays, as JSON.parse makes them) by its canonical copy, and returns `value`.
   */
  internAll<T>(value: T): T {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.#one(value[i]);
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = this.#one(record[key]);
    }
    return value;
  }

  #one(v: unknown): unknown {
    if (typeof v === 'string') return this.intern(v);
    if (typeof v === 'object' && v !== null) this.internAll(v);
    return v;
  }
}
