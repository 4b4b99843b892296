// Runs one async lookup per item with a concurrency limit and a deadline, for the loops whose
// items may come from what a tenant wrote (the operator's finalizer, `kubectl aiops
// force-finalize`): however many items there are, at most `concurrency` calls are in flight,
// and none starts once the deadline has passed, so a long list costs a bounded amount of
// time and connections instead of one request per item at once or in sequence. Pure of I/O:
// the caller brings the call; the clock is injectable for tests.

/** Limits of one run of mapWithLimits. */
export interface MapLimits {
  /** Calls in flight at once (at least 1). */
  readonly concurrency: number;
  /** No call starts once this many ms have passed since the run began (Infinity: no deadline). */
  readonly deadlineMs: number;
  /** Clock in ms (default performance.now). */
  readonly now?: () => number;
}

/** What a run of mapWithLimits did: each started item's result, in input order, and the items never started. */
export interface MapLimitsResult<T, R> {
  readonly done: readonly { readonly item: T; readonly result: R }[];
  /** Items not started because the deadline passed first, in input order. */
  readonly left: readonly T[];
}

/**
 * Calls `fn` for each of `items`, `limits.concurrency` at a time, starting none after
 * `limits.deadlineMs`. Waits for every started call (each bounded by its own timeout, e.g.
 * the transport's request timeout). No retries; the first call that rejects rejects the run
 * once the calls in flight have settled (no new call starts after it).
 */
export async function mapWithLimits<T, R>(
  items: readonly T[],
  limits: MapLimits,
  fn: (item: T) => Promise<R>,
): Promise<MapLimitsResult<T, R>> {
  const now = limits.now ?? (() => performance.now());
  const until = now() + limits.deadlineMs;
  const results: ({ item: T; result: R } | undefined)[] = Array.from({ length: items.length });
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length && now() < until) {
      const i = next++;
      const item = items[i] as T;
      try {
        results[i] = { item, result: await fn(item) };
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Math.max(1, Math.min(Math.floor(limits.concurrency), items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure !== undefined) throw failure.error;
  return {
    done: results.filter((r): r is { item: T; result: R } => r !== undefined),
    left: items.slice(next),
  };
}

/**
 * `names` as one line for a person, at most `max` of them: `a, b, c` or `a, b, c and 7 more`.
 * The count of the rest is exact; the names shown are the first ones.
 */
export function someNames(names: readonly string[], max: number): string {
  const shown = names.slice(0, Math.max(0, max)).join(', ');
  const more = names.length - Math.min(names.length, Math.max(0, max));
  if (more === 0) return shown;
  return shown === '' ? `${more} more` : `${shown} and ${more} more`;
}
