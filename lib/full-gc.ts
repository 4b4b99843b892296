// A full garbage collection on demand, without `--expose-gc` on node's command line: that
// flag changes V8's flag hash, so Node rejects the code cache built into its binary and
// compiles every built-in module the operator loads from source, which slows every start
// (docs/benchmarks.md). The function
// is made on first use, after start: V8's `gc` extension is set by flag at run time and read
// from a new context (it is installed when a context is created), as Jest's --logHeapUsage
// does. A `gc` the process already has (node --expose-gc) is used as it is.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/**
 * Runs one full (mark-compact) collection of the V8 heap, synchronously: everything
 * unreachable is freed and the freed pages are handed back. Costs a pause of a few ms per
 * 10 MiB of live heap; callers run it off the request path (after a burst, when idle).
 */
export function fullCollection(): void {
  collect ??= given(globalThis.gc) ?? extension();
  collect();
}

/** node --expose-gc's own gc(), synchronous (no options). */
function given(gc: typeof globalThis.gc): (() => void) | undefined {
  return gc === undefined
    ? undefined
    : () => {
        gc();
      };
}

function extension(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('V8 did not install gc() with --expose-gc');
  return () => {
    Reflect.apply(gc, undefined, []);
  };
}
