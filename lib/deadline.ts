// A deadline on a call that holds a worker: past it the worker stops waiting and goes on
// with a stand-in answer. The call itself is not cancelled (it ends by its own timeout);
// what it returns late is dropped. The operator puts one on every Prometheus query and LLM
// call, so a server that answers slowly, or byte by byte, cannot keep a worker.

/**
 * `call`'s result, or `late()`'s once `ms` have passed without one: the worker stops waiting
 * (the call itself ends by its own timeout; what it returns then is dropped). A call that
 * rejects rejects here too. No retries.
 */
export async function withDeadline<T>(call: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  try {
    return await Promise.race([call, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
