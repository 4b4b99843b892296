// Handling one request of the conversion webhook (server.ts owns the listener, certificates
// and keys): routing, refusing a review while its address, or all of them together, is in
// debt of conversion time,
// reading a ConversionReview's body within its peer's share and its deadline, taking a slot
// only once the body is whole, answering (the time it took charged to its address),
// counting and logging. A review that is not what the apiserver sends is counted as
// `malformed`, apart from a conversion that failed (review.ts says which). What
// a peer can make it log is bounded like the rest: a rejection or an internal error is one
// line per address and reason per minute (lib/log-once.ts), with the count it stands for.
// Refusals are answered by refusals.ts.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { fullCollection } from '../lib/full-gc.ts';
import type { PeerShares, Slots } from './capacity.ts';
import { describeCpuRefusal, type CpuBudget } from './cpu-budget.ts';
import { refuseAfterBody, reject, send, type RefusalCtx } from './refusals.ts';
import { handleReview, REVIEW_API_VERSION, type PendingStashKey, type ReviewOutcome } from './review.ts';

/** Seconds a client is told to wait (Retry-After) when the webhook is at its cap: 1. */
export const RETRY_AFTER_SECONDS = 1;

/** What handling a request needs of the server it arrived at. */
export interface Ctx extends RefusalCtx {
  /** The stash key in use, or why there is none yet. */
  key: () => Uint8Array | PendingStashKey;
  /** Per-address shares of the bytes held by requests being read or answered. */
  peers: PeerShares;
  /** Slots of reviews whose body is read, held until answered. */
  gate: Slots;
  /** Conversion time per remote address and in all. */
  cpu: CpuBudget;
}

/** Answers one request: /convert (POST), the health paths, else 404. */
export function route(req: IncomingMessage, res: ServerResponse, ctx: Ctx): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && (path === '/healthz' || path === '/readyz' || path === '/livez')) {
    send(res, 200, 'text/plain', 'ok');
  } else if (path === '/convert') {
    if (req.method !== 'POST') send(res, 405, 'text/plain', 'use POST for /convert', { Allow: 'POST' });
    else convertRequest(req, res, ctx);
  } else {
    send(res, 404, 'text/plain', `no handler for ${req.method ?? ''} ${path ?? ''}`);
  }
}

function convertRequest(req: IncomingMessage, res: ServerResponse, ctx: Ctx): void {
  const started = process.hrtime.bigint();
  const length = Number(req.headers['content-length'] ?? 0);
  const declared = Number.isSafeInteger(length) && length > 0 ? length : 0;
  if (declared > ctx.maxBody) {
    refuseAfterBody(
      req,
      res,
      ctx,
      {
        code: 413,
        message: `request body of ${declared} bytes exceeds the limit of ${ctx.maxBody}`,
        reason: 'body_too_large',
      },
      { declared, read: 0 },
    );
    return;
  }
  const peer = req.socket.remoteAddress ?? '';
  const cpu = ctx.cpu.refusal(peer, declared > 0 ? declared : ctx.maxBody);
  if (cpu !== undefined) {
    refuseAfterBody(req, res, ctx, { code: 429, ...describeCpuRefusal(cpu) }, { declared, read: 0 });
    return;
  }
  const reserved = declared > 0 ? declared : ctx.maxBody;
  let aborted = false;
  const chunks: Buffer[] = [];
  /** Ends the request early: answers `code` (unless an answer is out), closes the connection, drops the body. */
  const cutOff = (code: 408 | 429, message: string, reason: string): void => {
    if (aborted) return;
    aborted = true;
    chunks.length = 0;
    reject(req, res, ctx, code, message, reason, {
      Connection: 'close',
      ...(code === 429 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {}),
    });
    res.once('finish', () => req.socket.destroy());
  };
  const share = ctx.peers.admit(peer, reserved, () =>
    cutOff(429, 'other callers need the webhook; retry shortly', 'overloaded'),
  );
  if (typeof share === 'string') {
    refuseAfterBody(
      req,
      res,
      ctx,
      {
        code: 429,
        message:
          share === 'peer_share'
            ? "this address's requests hold its share of the webhook; retry once they are answered"
            : 'too many conversion reviews in flight; retry shortly',
        reason: share,
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      },
      { declared, read: 0 },
    );
    return;
  }
  // Released once the request is answered, cut off or its connection lost, whichever is first.
  res.once('close', share);
  const bodyTimer = setTimeout(
    () =>
      cutOff(408, `the request body did not arrive within ${ctx.deadlineFor(reserved)} ms`, 'slow_client'),
    ctx.deadlineFor(reserved),
  );
  res.once('close', () => clearTimeout(bodyTimer));
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if (aborted) return;
    size += chunk.length;
    if (size > ctx.maxBody) {
      aborted = true;
      chunks.length = 0;
      clearTimeout(bodyTimer);
      share();
      refuseAfterBody(
        req,
        res,
        ctx,
        {
          code: 413,
          message: `request body exceeds the limit of ${ctx.maxBody} bytes`,
          reason: 'body_too_large',
        },
        { declared, read: size },
      );
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    clearTimeout(bodyTimer);
    if (aborted) return;
    // The slot is taken only now, with the whole body here: a peer that stalls holds none.
    const release = ctx.gate.enter(size);
    if (release === undefined) {
      chunks.length = 0;
      reject(req, res, ctx, 429, 'too many conversion reviews in flight; retry shortly', 'overloaded', {
        'Retry-After': String(RETRY_AFTER_SECONDS),
      });
      return;
    }
    res.once('close', release);
    let uid = '';
    const converting = performance.now();
    try {
      const body = Buffer.concat(chunks).toString('utf8');
      // A keep-alive socket holds this request, and so these listeners, until its next one.
      chunks.length = 0;
      const outcome = handleReview(body, ctx.key());
      uid = outcome.body.response.uid;
      const answer = JSON.stringify(outcome.body);
      charge(ctx, peer, performance.now() - converting);
      send(res, outcome.httpStatus, 'application/json', answer);
      answerDeadline(req, res, ctx.deadlineFor(Buffer.byteLength(answer)));
      record(outcome, Number(process.hrtime.bigint() - started) / 1e9, size, ctx);
    } catch (err) {
      charge(ctx, peer, performance.now() - converting);
      internalError(res, ctx, uid, err);
    }
  });
  req.on('error', (err) => ctx.log.debug('request stream failed', { err }));
}

/** Charges `ms` of conversion time to `peer`'s share and the total, and counts it. */
function charge(ctx: Ctx, peer: string, ms: number): void {
  ctx.cpu.charge(peer, ms);
  ctx.metrics.conversionSeconds.inc(Math.max(0, ms) / 1000);
}

/** Closes the connection when the answer is not taken within `ms`: a peer that stops reading holds its slot no longer. */
function answerDeadline(req: IncomingMessage, res: ServerResponse, ms: number): void {
  if (res.writableFinished) return;
  const timer = setTimeout(() => req.socket.destroy(), ms);
  res.once('close', () => clearTimeout(timer));
}

/** Counts and logs an answered review. */
function record(outcome: ReviewOutcome, seconds: number, size: number, ctx: Ctx): void {
  const result = outcome.body.response.result.status;
  ctx.metrics.requests.inc({ code: String(outcome.httpStatus), result });
  ctx.metrics.duration.observe({ result }, seconds);
  if (size >= LARGE_REVIEW_BYTES) releaseSoon();
  for (const r of outcome.stashRejections) {
    ctx.metrics.stashRejected.inc({ reason: r.reason });
    const once = ctx.warnings.check(r.object, `stash_${r.reason}`);
    if (once.log)
      ctx.log.warn('conversion stash ignored; converted without it', {
        object: r.object,
        reason: r.reason,
        detail: r.detail,
        ...(once.suppressed > 0 ? { repeatedSinceLastLine: once.suppressed } : {}),
      });
  }
  if (result === 'Success') ctx.metrics.objects.inc({ desired: outcome.desired }, outcome.objects);
  else {
    const reason = outcome.stashKeyMissing
      ? 'stash_key_unavailable'
      : outcome.malformed
        ? 'malformed'
        : 'conversion';
    ctx.metrics.failures.inc({ reason });
    const once = ctx.warnings.check(outcome.failedObject, reason);
    if (!once.log) return;
    const r = outcome.body.response.result;
    ctx.log.warn('conversion refused', {
      uid: outcome.body.response.uid,
      message: 'message' in r ? r.message : '',
      ...(once.suppressed > 0 ? { repeatedSinceLastLine: once.suppressed } : {}),
    });
  }
}

/**
 * Answers a request whose handling threw: a ConversionReview Failure naming the error when
 * the review's uid is known, else a 500; logged (once per address per minute) and counted.
 * Never throws.
 */
export function internalError(res: ServerResponse, ctx: Ctx, uid: string, err: unknown): void {
  const message = `internal error: ${err instanceof Error ? err.message : String(err)}`;
  try {
    const peer = res.req.socket.remoteAddress ?? '';
    const once = ctx.warnings.check(`peer ${peer}`, 'internal');
    if (once.log)
      ctx.log.error('answering a request failed; it gets a Failure, the server goes on', {
        uid,
        err: message,
        peer,
        ...(once.suppressed > 0 ? { repeatedSinceLastLine: once.suppressed } : {}),
      });
    ctx.metrics.failures.inc({ reason: 'internal' });
    ctx.metrics.requests.inc({ code: uid === '' ? '500' : '200', result: 'Failure' });
  } catch {
    // Logging or counting failed too; the answer below still goes out.
  }
  try {
    if (uid === '') send(res, 500, 'text/plain', message);
    else {
      const review = {
        apiVersion: REVIEW_API_VERSION,
        kind: 'ConversionReview',
        response: { uid, result: { status: 'Failure', message } },
      };
      send(res, 200, 'application/json', JSON.stringify(review));
    }
  } catch {
    res.destroy();
  }
}

/**
 * Request bodies from this size on (a 1 MiB review holds ~2,500 objects) leave garbage in the
 * old generation (tens of MiB after a 10,000-object review: docs/benchmarks.md), which an
 * otherwise idle process keeps resident, since only a full collection hands it back and nothing else triggers one.
 */
const LARGE_REVIEW_BYTES = 1024 * 1024;

let releaseTimer: NodeJS.Timeout | undefined;

/**
 * One full collection a second after the last large review (a LIST's burst of reviews gets
 * one), off the request path (lib/full-gc.ts).
 */
function releaseSoon(): void {
  clearTimeout(releaseTimer);
  releaseTimer = setTimeout(fullCollection, 1000).unref();
}
