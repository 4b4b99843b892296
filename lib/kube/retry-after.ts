// The apiserver answers 429 (max-in-flight, priority and fairness, a CRD's storage still
// initializing) or a 5xx with a Retry-After header when the request was not served and may
// simply be sent again. client-go's rest client does so transparently (up to 10 times, waiting
// what the header says); this is that rule, so a moment's refusal never reaches a controller
// as an error.

/** How many times one request is sent again on Retry-After (client-go's default, 10). */
export const MAX_RETRY_AFTER_RETRIES = 10;

/** The longest wait honoured per retry, in ms: a larger Retry-After is waited this long (30 000). */
export const MAX_RETRY_AFTER_MS = 30_000;

/**
 * The wait in ms before sending a request again, or undefined when its answer is final. As
 * client-go's checkWait: only 429 and 5xx answers, and only with a Retry-After of whole
 * seconds (an HTTP date is not honoured); the wait is capped at MAX_RETRY_AFTER_MS.
 */
export function retryAfterMs(
  status: number,
  header: string | readonly string[] | undefined,
): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const value = typeof header === 'string' ? header : header?.[0];
  if (value === undefined || !/^\s*\d{1,6}\s*$/.test(value)) return undefined;
  return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
