// The AITask cache's part of the memory ledger (runtime/memory-ledger.ts): its share of the
// ledger and each namespace's share of it, in heap charge, like the target caches'
// (runtime/target-kinds.ts), and the keys every trimmed AITask shares (the v2 schema's field
// names, the metadata the cache keeps, the approval annotation), which the charge counts as
// shared. A key a tenant chooses (none survives trimming today) is charged as unique.

import { APPROVE_ANNOTATION } from '../api/install.ts';
import type { JSONSchemaProps } from '../api/schema/infer.ts';
import * as v2 from '../api/schema/v2.ts';
import type { LedgerShare } from './runtime/memory-ledger.ts';
import { CUSTOM_OBJECT_KEYS, METADATA_KEYS } from './runtime/trim.ts';

/**
 * Half the ledger (~48 MiB of heap charge at the shipped limit: a trimmed AITask as the
 * operator writes it, seven conditions, is charged ~7 KiB, so ~7,000 of them), an eighth of
 * that per namespace (~6 MiB: 97 AITasks at the object bound, ~900 as written); an operator
 * watching one namespace gives it the whole share.
 */
export const TASK_CACHE_SHARE: LedgerShare = { cache: 1 / 2, namespace: 1 / 8 };

/** Every property name `schema` declares, at any depth. */
function schemaKeys(schema: JSONSchemaProps): string[] {
  return [
    ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) => [k, ...schemaKeys(s)]),
    ...(schema.items ? schemaKeys(schema.items) : []),
    ...(schema.additionalProperties ? schemaKeys(schema.additionalProperties) : []),
  ];
}

/** The keys every trimmed AITask shares: charged as shared (heap-charge.ts). */
export const TASK_KEYS: ReadonlySet<string> = new Set([
  ...CUSTOM_OBJECT_KEYS,
  ...METADATA_KEYS,
  APPROVE_ANNOTATION,
  ...schemaKeys(v2.specSchema),
  ...schemaKeys(v2.statusSchema),
]);
