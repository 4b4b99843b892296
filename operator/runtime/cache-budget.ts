// The budget of one informer's cache, in heap charge (heap-charge.ts, the ledger's unit,
// memory-ledger.ts): the charge of each cached object, of each namespace's objects and of all
// of them, and the rule that refuses an object which is past the bound on its own or would
// take its namespace or the whole cache past its share. Pure bookkeeping; the informer
// decides what to cache and remembers what was refused.

/** Why an object is not cached: a closed set, the `reason` label of the refusal counter. */
export const REFUSAL_REASONS = ['TooLarge', 'NotAdmitted', 'CacheFull'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Why one object is not cached: the reason, and a sentence saying it for a status. */
export interface Refusal {
  readonly reason: RefusalReason;
  readonly message: string;
}

/**
 * Refused objects whose refusal an informer remembers by key: 4,096 (a few hundred bytes
 * each, ~1.5 MiB at most). Past it refusals are counted and reported but not remembered, and
 * a reader finds those objects missing.
 */
export const MAX_REFUSALS_KEPT = 4096;

/** The bounds of a CacheBudget, in bytes of heap charge; each unset one does not bound. */
export interface CacheLimits {
  /** Largest object cached. */
  readonly maxObjectCharge?: number | undefined;
  /** All the cached objects together. */
  readonly maxCacheCharge?: number | undefined;
  /** The cached objects of one namespace together (cluster-scoped ones share the namespace ''). */
  readonly maxNamespaceCharge?: number | undefined;
}

/** The charge a cache holds, by key and namespace, against its CacheLimits. */
export class CacheBudget {
  readonly #limits: CacheLimits;
  /** Charge of each cached object, by key. */
  readonly #sizes = new Map<string, number>();
  /** Charge of the cached objects of each namespace. */
  readonly #namespaceBytes = new Map<string, number>();
  #bytes = 0;

  constructor(limits: CacheLimits) {
    this.#limits = limits;
  }

  /** Charge of all the objects held, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Why an object charged `bytes`, to be held under `key` in `namespace`, may not be held, else
   * undefined: TooLarge past maxObjectCharge on its own, then NotAdmitted when `admit` says
   * why (it is asked only of an object not too large), then CacheFull (`full`).
   */
  refusal(
    key: string,
    namespace: string,
    bytes: number,
    admit: () => string | undefined = () => undefined,
  ): Refusal | undefined {
    const tooLarge = this.#tooLarge(bytes);
    if (tooLarge !== undefined) return tooLarge;
    const refused = admit();
    if (refused !== undefined) return { reason: 'NotAdmitted', message: refused };
    return this.#full(key, namespace, bytes);
  }

  /** TooLarge when an object charged `bytes` is past maxObjectCharge on its own, else undefined. */
  #tooLarge(bytes: number): Refusal | undefined {
    const max = this.#limits.maxObjectCharge;
    if (max === undefined || bytes <= max) return undefined;
    return {
      reason: 'TooLarge',
      message: `it costs ${bytes} bytes of the operator's heap once trimmed, more than the ${max} it caches of one object`,
    };
  }

  /**
   * CacheFull when holding a charge of `bytes` under `key` (replacing what it holds there) would take the
   * cache or `namespace` past its budget, else undefined. An object that does not grow is
   * never refused.
   */
  #full(key: string, namespace: string, bytes: number): Refusal | undefined {
    const grown = bytes - (this.#sizes.get(key) ?? 0);
    if (grown <= 0) return undefined;
    const { maxCacheCharge, maxNamespaceCharge } = this.#limits;
    if (maxCacheCharge !== undefined && this.#bytes + grown > maxCacheCharge)
      return {
        reason: 'CacheFull',
        message: `the operator's cache of this kind is full (${maxCacheCharge} bytes of heap)`,
      };
    if (
      maxNamespaceCharge !== undefined &&
      (this.#namespaceBytes.get(namespace) ?? 0) + grown > maxNamespaceCharge
    )
      return {
        reason: 'CacheFull',
        message: `the operator's cache of this kind holds its most for namespace ${namespace} (${maxNamespaceCharge} bytes of heap)`,
      };
    return undefined;
  }

  /** Records that `key`, of `namespace`, now holds `bytes`. */
  hold(key: string, namespace: string, bytes: number): void {
    const grown = bytes - (this.#sizes.get(key) ?? 0);
    this.#bytes += grown;
    this.#namespaceBytes.set(namespace, (this.#namespaceBytes.get(namespace) ?? 0) + grown);
    this.#sizes.set(key, bytes);
  }

  /** Records that `key`, of `namespace`, holds nothing any more. */
  release(key: string, namespace: string): void {
    const size = this.#sizes.get(key) ?? 0;
    this.#bytes -= size;
    const left = (this.#namespaceBytes.get(namespace) ?? 0) - size;
    if (left > 0) this.#namespaceBytes.set(namespace, left);
    else this.#namespaceBytes.delete(namespace);
    this.#sizes.delete(key);
  }
}
