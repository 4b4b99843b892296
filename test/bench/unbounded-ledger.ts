// The memory ledger of the `memory` bench's untrimmed baseline (untrimmed-cache.ts):
// operator/runtime/memory-ledger.ts as the operator's bundle sees it, but its bounds bound
// nothing, so every object is cached whatever its charge and however many there are.

import type { ChargeBounds } from '../../operator/runtime/memory-ledger.ts';

export * from '../../operator/runtime/memory-ledger.ts';

/** No bound: every object is cached, the cache and each namespace hold any charge. */
export function chargeBounds(): ChargeBounds {
  return {
    maxObjectCharge: Number.POSITIVE_INFINITY,
    maxCacheCharge: Number.POSITIVE_INFINITY,
    maxNamespaceCharge: Number.POSITIVE_INFINITY,
  };
}
