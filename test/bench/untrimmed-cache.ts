// The baseline of the `memory` bench's oversized measure: operator/runtime/trim.ts as the
// operator's bundle sees it, but with the AITask cache untrimmed. Bundled in place of trim.ts
// (memory.ts's esbuild plugin), it leaves every export of trim.ts as it is except
// trimCustomObject, which keeps the whole object (only what the informer drops from every
// object goes: managedFields and kubectl's last-applied-configuration); unbounded-ledger.ts,
// bundled in place of memory-ledger.ts, bounds nothing, so no object is refused for its size
// or its cache's share. The bench runs this bundle beside the shipped one, in the same run,
// on the same AITasks.

import { slimMetadata } from '../../operator/runtime/informer.ts';

export * from '../../operator/runtime/trim.ts';

/** The informer's own transform (slimMetadata), whatever annotations the caller would keep. */
export function trimCustomObject(): typeof slimMetadata {
  return slimMetadata;
}
