// The caches' metrics, read from each informer at scrape time: the heap charge (bytes,
// heap-charge.ts: what the memory ledger counts) and the objects each cache holds and the objects it refused, by reason. The `resource` label is the cached
// resource's plural name, fixed by the operator; `reason` is the closed REFUSAL_REASONS.

import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import { REFUSAL_REASONS, type RefusalReason } from './cache-budget.ts';

/** What the cache metrics read of an informer. */
export interface CacheSize {
  readonly bytes: number;
  readonly size: number;
  readonly refusedBy: Readonly<Record<RefusalReason, number>>;
}

/**
 * Registers the caches' metrics on `registry`, read from `informers` (resource label →
 * informer) at each scrape: `aiops_cache_bytes{resource}` (heap charge of the cached objects
 * in bytes, never below what the heap holds for them: Informer.bytes), `aiops_cache_objects{resource}` and
 * `aiops_cache_objects_refused_total{resource,reason}` (objects not cached, by RefusalReason).
 */
export function registerCacheMetrics(
  registry: Registry,
  informers: Readonly<Record<string, CacheSize>>,
): void {
  const each = (read: (i: CacheSize) => number, set: (resource: string, v: number) => void): void => {
    for (const [resource, informer] of Object.entries(informers)) set(resource, read(informer));
  };
  new Gauge({
    name: 'aiops_cache_bytes',
    help: 'Heap charge in bytes of the objects cached (after trimming), by resource: never below what the V8 heap holds for them, what the memory ledger bounds',
    labelNames: ['resource'],
    registers: [registry],
    collect() {
      each(
        (i) => i.bytes,
        (resource, v) => this.set({ resource }, v),
      );
    },
  });
  new Gauge({
    name: 'aiops_cache_objects',
    help: 'Objects cached, by resource',
    labelNames: ['resource'],
    registers: [registry],
    collect() {
      each(
        (i) => i.size,
        (resource, v) => this.set({ resource }, v),
      );
    },
  });
  new Counter({
    name: 'aiops_cache_objects_refused_total',
    help: "Objects not cached, by resource and reason: TooLarge (past the object bound once trimmed), NotAdmitted (such as a Deployment selector past its bound), CacheFull (past the cache's or the namespace's share of the memory ledger)",
    labelNames: ['resource', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const reason of REFUSAL_REASONS)
        each(
          (i) => i.refusedBy[reason],
          (resource, v) => this.inc({ resource, reason }, v),
        );
    },
  });
}
