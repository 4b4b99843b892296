// A Map bounded by a number of entries, least recently used evicted first: for tables whose
// keys come from outside (endpoints named in AITask specs, bearer tokens sent to /metrics),
// where an unbounded Map would let a tenant or a stranger grow the process's memory. Expiry,
// when a table needs one, is kept in its values by the caller.

/**
 * A Map holding at most `capacity` entries, least recently used evicted first (a get or a
 * set counts as a use). Map keeps insertion order, so the oldest key is the first.
 */
export class LruMap<K, V> {
  readonly #capacity: number;
  readonly #map = new Map<K, V>();

  /** `capacity`: the most entries kept (at least 1). */
  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The value for `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  /** Sets `key`, the most recently used now, evicting the least recently used when full. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }

  /** Removes `key`, if present. */
  delete(key: K): void {
    this.#map.delete(key);
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }

  /** The values, least recently used first; reading them changes no recency. */
  values(): IterableIterator<V> {
    return this.#map.values();
  }
}
