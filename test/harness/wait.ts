// Polling, one implementation for the harness and the tests: every readiness wait of the
// harness also watches the processes started so far, so a component that crashes fails
// startup at once with its log tail instead of a bare timeout; `eventually` is the same wait
// for tests, with nothing to watch.
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail, type Component } from './process.ts';

/** Options for `waitFor`. */
export interface WaitOptions {
  /** Absolute deadline (Date.now() ms). */
  readonly deadline: number;
  /** Processes that must stay alive while waiting. */
  readonly watch: readonly Component[];
  /** Poll interval in ms (default 50). */
  readonly intervalMs?: number;
  /** Stops the wait with the signal's reason once aborted (checked before every poll). */
  readonly signal?: AbortSignal | undefined;
}

/** Error message for a component that exited, with the last lines of its log. */
export async function exitedMessage(c: Component, status: string): Promise<string> {
  return `${c.name} (pid ${c.pid}) exited during startup (${status}); last lines of ${c.logPath}:\n${await logTail(c.logPath)}`;
}

/**
 * Polls `check` every `intervalMs` until it returns a value other than `undefined`. A throw
 * from `check` counts as "not yet" (its message is kept for the timeout error). Rejects as
 * soon as a watched component has exited, or at the deadline (message names `what`, the
 * last check error and the log tails of the watched components), or once `signal` aborts.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  opts: WaitOptions,
): Promise<T> {
  let lastError = '';
  for (;;) {
    opts.signal?.throwIfAborted();
    for (const c of opts.watch) {
      const status = c.exitStatus();
      if (status !== undefined) throw new Error(`waiting for ${what}: ${await exitedMessage(c, status)}`);
    }
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= opts.deadline) {
      const tails = await Promise.all(
        opts.watch.map(async (c) => `\n--- ${c.name}:\n${await logTail(c.logPath, 10)}`),
      );
      throw new Error(
        `timed out waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}${tails.join('')}`,
      );
    }
    await sleep(opts.intervalMs ?? 50);
  }
}

/**
 * The tests' polling helper: `check` every `intervalMs` (default 200) until it returns a value
 * other than undefined, which is returned; a throw counts as "not yet" and its message is kept
 * for the error thrown after `timeoutMs` (default 60 s), which names `what`.
 */
export function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 200,
): Promise<T> {
  return waitFor(what, check, { deadline: Date.now() + timeoutMs, watch: [], intervalMs });
}
