// The secondary indexes of one informer's cache, as client-go's Indexer: for each index name,
// a function giving an object's index values, and from each value the keys of the cached
// objects that have it. Kept in step with the cache by `update` on every add, change and delete.

/** Index name → the index values of an object. */
export type Indexers<T> = Readonly<Record<string, (obj: T) => readonly string[]>>;

/** The keys of cached objects by index name and value. */
export class CacheIndexes<T> {
  readonly #indexers: Indexers<T>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Indexers<T>) {
    this.#indexers = indexers;
    for (const name of Object.keys(indexers)) this.#indexes.set(name, new Map());
  }

  /** Keys of the cached objects whose index `name` contains `value` (none for an unknown index). */
  keys(name: string, value: string): string[] {
    return [...(this.#indexes.get(name)?.get(value) ?? [])];
  }

  /** Moves `key` from the values of `old` (undefined: not cached before) to those of `obj` (undefined: deleted). */
  update(key: string, old: T | undefined, obj: T | undefined): void {
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const index = this.#indexes.get(name);
      if (!index) continue;
      for (const v of old ? fn(old) : []) {
        const set = index.get(v);
        set?.delete(key);
        if (set?.size === 0) index.delete(v);
      }
      for (const v of obj ? fn(obj) : []) {
        let set = index.get(v);
        if (!set) index.set(v, (set = new Set()));
        set.add(key);
      }
    }
  }
}
