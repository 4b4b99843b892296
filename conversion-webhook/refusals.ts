// Refusing a request of the conversion webhook (requests.ts decides when): counted and logged
// once per address and reason per minute, answered as a Status. A refused body is read and
// dropped before the answer, so the client reads the answer instead of a reset; what is read
// this way is budgeted like the bytes of requests being converted, per remote address and in
// all (`drains`, capacity.ts's PeerShares): beyond its share a refusal is answered at once,
// and when all shares are taken a smaller holder's refusal pushes out the biggest holder's
// newest, which is answered at once too.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../lib/log.ts';
import type { LogOnce } from '../lib/log-once.ts';
import type { PeerShares } from './capacity.ts';
import type { WebhookMetrics } from './metrics.ts';

/** What refusing a request needs of the server it arrived at. */
export interface RefusalCtx {
  log: Logger;
  metrics: WebhookMetrics;
  maxBody: number;
  /** Deadline in ms for a body or an answer of `bytes`. */
  deadlineFor: (bytes: number) => number;
  /** One warning line per object and reason per minute (lib/log-once.ts). */
  warnings: LogOnce;
  /** Per-address shares of the refused bodies being read and dropped. */
  drains: PeerShares;
}

/** A refusal: its status, the message a Status body carries, the failure reason it is counted and logged under. */
export interface Refusal {
  code: 413 | 429;
  message: string;
  reason: string;
  /** Sent beside `Connection: close`. */
  headers?: Record<string, string>;
}

/**
 * Refuses a request (counted and logged at once) but answers only once its body is read and
 * dropped, up to twice the body limit in all and within the deadline of a body that size
 * (`deadlineFor`); past either it answers at once, as it does a body declared bigger.
 * Closing a connection with bytes unread makes the kernel reset it, and a reset makes the
 * client's kernel drop the answer the client has not read yet: a client that sends its
 * whole body before reading (as HTTP/1.1 clients without `Expect: 100-continue` do) would
 * see a broken pipe instead of the refusal. Read to its end, the connection closes cleanly
 * after the answer. A refused body holds no share of the bytes being converted and no slot
 * while it is dropped; it holds its declared size (twice the body limit when undeclared) of
 * its address's drain share, and is answered at once when that share is full, or when it is
 * pushed out to make room for a smaller holder's. `body`: its declared Content-Length (0 when
 * none) and the bytes already read.
 */
export function refuseAfterBody(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RefusalCtx,
  refusal: Refusal,
  body: { readonly declared: number; readonly read: number },
): void {
  const most = 2 * ctx.maxBody;
  const { declared } = body;
  let { read } = body;
  countRefusal(req, ctx, refusal.code, refusal.message, refusal.reason);
  let answered = false;
  const answer = (): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    sendRefusal(req, res, refusal.code, refusal.message, { Connection: 'close', ...refusal.headers });
  };
  const timer = setTimeout(answer, ctx.deadlineFor(declared > 0 ? declared : most));
  res.once('close', () => clearTimeout(timer));
  if (declared > most || read > most || req.complete) {
    answer();
    return;
  }
  const drain = ctx.drains.admit(req.socket.remoteAddress ?? '', declared > 0 ? declared : most, answer);
  if (typeof drain === 'string') {
    answer();
    return;
  }
  res.once('close', drain);
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > most) answer();
  });
  req.once('end', answer);
  req.resume();
}

/** Counts, logs and answers a refusal at once (its body, if any, is not waited for). */
export function reject(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RefusalCtx,
  code: number,
  message: string,
  reason: string,
  headers: Record<string, string> = { Connection: 'close' },
): void {
  countRefusal(req, ctx, code, message, reason);
  sendRefusal(req, res, code, message, headers);
}

/** Counts and logs (once per address and reason per minute) a refusal as it is decided. */
function countRefusal(
  req: IncomingMessage,
  ctx: RefusalCtx,
  code: number,
  message: string,
  reason: string,
): void {
  ctx.metrics.requests.inc({ code: String(code), result: 'Failure' });
  ctx.metrics.failures.inc({ reason });
  const peer = req.socket.remoteAddress ?? '';
  const once = ctx.warnings.check(`peer ${peer}`, reason);
  if (once.log)
    ctx.log.warn('request rejected', {
      code,
      reason,
      message,
      peer,
      ...(once.suppressed > 0 ? { repeatedSinceLastLine: once.suppressed } : {}),
    });
}

/** Answers a refusal as a Status and drops whatever of the body is still to come. */
function sendRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  code: number,
  message: string,
  headers: Record<string, string>,
): void {
  send(
    res,
    code,
    'application/json',
    JSON.stringify({ kind: 'Status', status: 'Failure', code, message }),
    headers,
  );
  req.resume();
}

/** Answers `code` with `body` of content type `type`, unless an answer is already out. */
export function send(
  res: ServerResponse,
  code: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
