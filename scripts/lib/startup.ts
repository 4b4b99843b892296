// What `npm start` needs to start processes in order and fail in one line: an error that
// carries its fix, and a wait for an HTTP(S) endpoint to answer 200.
import * as http from 'node:http';
import * as https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

/** A startup failure a user can act on: `message` says what failed, `fix` what to do. */
export class StartupError extends Error {
  readonly fix: string;
  constructor(message: string, fix: string) {
    super(message);
    this.name = 'StartupError';
    this.fix = fix;
  }
}

/** Status of one GET (0 when the connection fails), 2 s timeout per request. */
function status(url: string, ca: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { timeout: 2000, ...(ca ? { ca } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/**
 * Polls `url` every 100 ms until it answers 200; `ca` (PEM) verifies an https endpoint.
 * Rejects with a StartupError naming `what` after `timeoutMs` (default 60 000).
 */
export async function waitForHttp(
  url: string,
  opts: { readonly what: string; readonly timeoutMs?: number; readonly ca?: string },
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = 0;
  while (Date.now() < deadline) {
    last = await status(url, opts.ca);
    if (last === 200) return;
    await sleep(100);
  }
  throw new StartupError(
    `${opts.what} did not answer ${url} with 200 in time (last: ${last === 0 ? 'no connection' : `HTTP ${last}`})`,
    'its log is above',
  );
}
