// One memory ledger for every cache, in heap charge (heap-charge.ts): the caches together may
// hold three eighths of the heap the process may use, the smaller of V8's heap limit and the
// memory limit of the container (Node's constrained memory: under a small limit V8 still sizes
// its heap at ~259 MiB, more than the container holds). Each cache has a fixed share of the
// ledger and each namespace a fixed share of its cache, so the caches' sum never passes the
// ledger whatever tenants write, and one tenant fills at most its namespace's share. The rest
// of the heap is the lists' pages in flight, the string pool, the refusals remembered and the
// process itself. scripts/security/inventory-reads.ts states the arithmetic and
// scripts/security/cache-ledger.test.ts checks it at the shipped memory limit.
// Pure: numbers in, numbers out; the edge reads the limits (assembly-caches.ts).

/**
 * The part of the memory basis the caches together may hold: three eighths (~97 MiB of the
 * ~259 MiB heap under the shipped 384 Mi). The other five eighths hold a list page in flight
 * (up to ~90 MiB for a 16 MiB page of short strings: text and parsed objects), the string
 * pool (~10 MiB), the refusals remembered (~1.5 MiB a cache) and the process (~40 MiB).
 */
export const LEDGER_FRACTION = 3 / 8;

/**
 * Largest object a cache holds, in heap charge once trimmed: 64 KiB. A trimmed AITask at its
 * spec's bounds in two-byte characters with seven long conditions is ~35 KiB
 * (operator/cache-trim.test.ts), one as the operator writes it ~7 KiB, a trimmed Deployment
 * or StatefulSet ~2 KiB; only an object whose finalizers,
 * status or approval someone made huge passes it, and it is refused rather than cached.
 */
export const MAX_OBJECT_CHARGE = 64 * 1024;

/**
 * Fewest objects at MAX_OBJECT_CHARGE every namespace's share of every cache holds: 16. The
 * inventory test fails when a share or the bound moves past it.
 */
export const MIN_WORST_OBJECTS_PER_NAMESPACE = 16;

/** A cache's part of the ledger: its share of the whole and each namespace's share of the cache's. */
export interface LedgerShare {
  /** Fraction of the ledger the cache may hold. */
  readonly cache: number;
  /** Fraction of the cache's share one namespace may hold. */
  readonly namespace: number;
}

/** The bounds one cache is given, in heap charge: what CacheBudget enforces. */
export interface ChargeBounds {
  readonly maxObjectCharge: number;
  readonly maxCacheCharge: number;
  readonly maxNamespaceCharge: number;
}

/**
 * The memory basis of the ledger in bytes: the smaller of V8's heap limit
 * (v8.getHeapStatistics().heap_size_limit) and the container's memory limit
 * (process.constrainedMemory(); 0 or undefined when there is none).
 */
export function memoryBasis(heapLimitBytes: number, constrainedBytes: number | undefined): number {
  return constrainedBytes !== undefined && constrainedBytes > 0
    ? Math.min(heapLimitBytes, constrainedBytes)
    : heapLimitBytes;
}

/** The ledger of a process whose memory basis is `basisBytes`, in heap charge: LEDGER_FRACTION of it. */
export function ledgerCharge(basisBytes: number): number {
  return Math.floor(basisBytes * LEDGER_FRACTION);
}

/** The bounds of a cache of `share` in a ledger of `ledger` bytes, the object bound MAX_OBJECT_CHARGE. */
export function chargeBounds(ledger: number, share: LedgerShare): ChargeBounds {
  const maxCacheCharge = Math.floor(ledger * share.cache);
  return {
    maxObjectCharge: MAX_OBJECT_CHARGE,
    maxCacheCharge,
    maxNamespaceCharge: Math.floor(maxCacheCharge * share.namespace),
  };
}
