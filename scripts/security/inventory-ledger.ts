// The caches' memory ledger as the inventory states it: for every cache (the AITask cache and
// one per target kind), its object bound, its namespace's share and its share of the ledger,
// in heap charge, at the shipped memory limit, and the arithmetic that they fit: the worst
// objects a namespace is promised fit its share, the shares fit the ledger, and the ledger,
// a list page in flight at its worst and the process fit the heap. cache-ledger.test.ts checks
// it; inventory-reads.ts renders the phrases into the aitasks and targets entries.

import {
  chargeBounds,
  ledgerCharge,
  MAX_OBJECT_CHARGE,
  memoryBasis,
  MIN_WORST_OBJECTS_PER_NAMESPACE,
  type ChargeBounds,
  type LedgerShare,
} from '../../operator/runtime/memory-ledger.ts';
import { TARGET_KINDS } from '../../operator/runtime/target-kinds.ts';
import { TASK_PAGE_BYTES } from '../../operator/runtime/trim.ts';
import { TASK_CACHE_SHARE } from '../../operator/task-cache-share.ts';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../olm/deployment.ts';

const MIB = 2 ** 20;

/**
 * V8's heap limit under the shipped memory limit, as Node 24 derives it with the image's
 * flags: 259 MiB (test/attacks/stage.ts measures it in a memory cgroup of that limit, and
 * test/attacks/cache-ledger.test.ts checks the arithmetic at the heap it measured).
 */
export const SHIPPED_HEAP_LIMIT_BYTES = 259 * MIB;

/**
 * What the heap holds beside the caches' ledger at its worst, in bytes: one list page in
 * flight (its text and what parsing it makes, ~4.6 times the text for short strings), and
 * the process itself (code, the string pool, the refusals remembered, clients): 40 MiB.
 */
export const OUTSIDE_LEDGER_BYTES = Math.ceil(TASK_PAGE_BYTES * 5.6) + 40 * MIB;

/** One cache's line of the ledger. */
export interface LedgerLine {
  /** The cached resource's plural (the `resource` label of the cache metrics). */
  readonly resource: string;
  readonly share: LedgerShare;
}

/** Every cache and its share: the AITask cache and one per target kind. */
export const LEDGER_LINES: readonly LedgerLine[] = [
  { resource: 'aitasks', share: TASK_CACHE_SHARE },
  ...Object.values(TARGET_KINDS).map((r) => ({ resource: r.resource.plural, share: r.share })),
];

/** What the arithmetic is done on: the heap limit, the caches' lines and the object bound. */
export interface LedgerInputs {
  readonly heapLimitBytes: number;
  readonly lines: readonly LedgerLine[];
  readonly maxObjectCharge: number;
}

/** The shipped inputs: SHIPPED_HEAP_LIMIT_BYTES, LEDGER_LINES, MAX_OBJECT_CHARGE. */
export const SHIPPED: LedgerInputs = {
  heapLimitBytes: SHIPPED_HEAP_LIMIT_BYTES,
  lines: LEDGER_LINES,
  maxObjectCharge: MAX_OBJECT_CHARGE,
};

/** The ledger's numbers for `inputs` under the shipped memory limit. */
export function ledgerAt(inputs: LedgerInputs = SHIPPED): {
  readonly ledger: number;
  readonly lines: readonly (LedgerLine & ChargeBounds)[];
} {
  const ledger = ledgerCharge(memoryBasis(inputs.heapLimitBytes, OPERATOR_MEMORY_LIMIT_MIB * MIB));
  return {
    ledger,
    lines: inputs.lines.map((l) => ({
      ...l,
      ...chargeBounds(ledger, l.share),
      maxObjectCharge: inputs.maxObjectCharge,
    })),
  };
}

/**
 * Where the arithmetic does not hold for `inputs`, one sentence each; empty when
 * it does: each namespace's share holds MIN_WORST_OBJECTS_PER_NAMESPACE objects at the bound
 * and is within its cache's share, the shares add up to no more than the ledger, and the
 * ledger and what the heap holds beside it fit the heap.
 */
export function ledgerMisfits(inputs: LedgerInputs = SHIPPED): string[] {
  const { ledger, lines } = ledgerAt(inputs);
  const out: string[] = [];
  for (const l of lines) {
    if (l.maxObjectCharge * MIN_WORST_OBJECTS_PER_NAMESPACE > l.maxNamespaceCharge)
      out.push(
        `${l.resource}: ${MIN_WORST_OBJECTS_PER_NAMESPACE} objects of ${l.maxObjectCharge} bytes do not fit a namespace's ${l.maxNamespaceCharge}`,
      );
    if (l.maxNamespaceCharge > l.maxCacheCharge)
      out.push(`${l.resource}: a namespace's share is more than the cache's`);
  }
  const shares = lines.reduce((n, l) => n + l.maxCacheCharge, 0);
  if (shares > ledger) out.push(`the caches' shares add up to ${shares} bytes, past the ledger's ${ledger}`);
  if (ledger + OUTSIDE_LEDGER_BYTES > inputs.heapLimitBytes)
    out.push(
      `the ledger (${ledger} bytes) and what the heap holds beside it (${OUTSIDE_LEDGER_BYTES}) pass the heap limit ${inputs.heapLimitBytes}`,
    );
  return out;
}

const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

/** The inventory's phrase of `resource`'s budget in the ledger at the shipped limit. */
export function ledgerPhrase(resource: string): string {
  const { ledger, lines } = ledgerAt();
  const l = lines.find((x) => x.resource === resource);
  if (l === undefined) throw new Error(`no ledger line for ${resource}`);
  const perNamespace = Math.floor(l.maxNamespaceCharge / l.maxObjectCharge);
  return `heap charge (operator/runtime/heap-charge.ts: strings, slots, headers, never below what V8 holds), one ledger of ${mib(ledger)} for all caches (3/8 of the ${mib(SHIPPED_HEAP_LIMIT_BYTES)} heap under the shipped ${OPERATOR_MEMORY_LIMIT_MIB} Mi; derived at start from the heap and memory limits): an object over ${MAX_OBJECT_CHARGE / 1024} KiB trimmed is refused (TooLarge); ${resource} hold at most ${mib(l.maxCacheCharge)} (${Math.floor(l.maxCacheCharge / l.maxObjectCharge)} objects at the bound) and ${mib(l.maxNamespaceCharge)} per namespace (${perNamespace} at the bound; the whole share when the operator watches one namespace); past it CacheFull; aiops_cache_bytes reports the charge`;
}
