// The webhook's cap on reviews in flight, over real HTTPS: with the cap at N, N large
// reviews held open mid-body and one more arriving, the extra one is answered 429 with
// Retry-After (what the apiserver's client retries on) and the N still complete; a review
// over the byte budget is refused the same way while a small one passes beside it. The cap is
// asserted on the webhook's own in-flight gauges (their highest value), never on timing.

import { eventually } from '../test/harness/wait.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RETRY_AFTER_SECONDS, startWebhookServer, type WebhookServer } from './server.ts';
import { createMetrics, type WebhookMetrics } from './metrics.ts';
import { createLogger } from '../api/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-admission-'));
const cert = createServingCert(join(dir, 'a'));
const quiet = createLogger('test', { level: 'error' });
const MAX_BODY = 256 * 1024;

/** A ConversionReview of `bytes` bytes (one v1alpha1 object padded by an annotation). */
function reviewOf(bytes: number): Buffer {
  const doc = (pad: string) =>
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'cap',
        desiredAPIVersion: 'aiops.example.com/v2',
        objects: [
          {
            apiVersion: 'aiops.example.com/v1alpha1',
            kind: 'AITask',
            metadata: { name: 'a', namespace: 'n', annotations: { pad } },
            spec: { target: 'web', threshold: 80, action: 'ScaleUp' },
          },
        ],
      },
    });
  return Buffer.from(doc('x'.repeat(Math.max(0, bytes - doc('').length))));
}

/** The highest values the in-flight gauges reached, tracked as the server moves them. */
function peaks(metrics: WebhookMetrics): {
  count: () => number;
  maxCount: () => number;
  maxBytes: () => number;
} {
  const level = { count: 0, bytes: 0, maxCount: 0, maxBytes: 0 };
  /** Wraps inc or dec of `gauge` to add `sign` times the amount to level[`key`]. */
  const track = (
    gauge: WebhookMetrics['inFlight'],
    method: 'inc' | 'dec',
    key: 'count' | 'bytes',
    sign: number,
  ) => {
    const original = gauge[method].bind(gauge) as (value?: number) => void;
    gauge[method] = ((value?: number) => {
      original(value);
      level[key] += sign * (value ?? 1);
      level.maxCount = Math.max(level.maxCount, level.count);
      level.maxBytes = Math.max(level.maxBytes, level.bytes);
    }) as typeof gauge.inc;
  };
  track(metrics.inFlight, 'inc', 'count', 1);
  track(metrics.inFlight, 'dec', 'count', -1);
  track(metrics.inFlightBytes, 'inc', 'bytes', 1);
  track(metrics.inFlightBytes, 'dec', 'bytes', -1);
  return { count: () => level.count, maxCount: () => level.maxCount, maxBytes: () => level.maxBytes };
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A POST /convert whose body is sent in two parts: the first at once, the rest at `finish()`. */
function heldPost(port: number, body: Buffer): { answer: Promise<Answer>; finish: () => void } {
  let finish = (): void => undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/convert',
        ca: cert.caPem,
        agent: false,
        servername: 'localhost',
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    // A refused request's connection closes while its body is still being sent.
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err),
    );
    req.write(body.subarray(0, 1024));
    finish = () => req.end(body.subarray(1024));
  });
  return { answer, finish };
}

/** Polls `ok` every 10 ms (at most 10 s): how the test waits for the server, without timing assertions. */
async function until(what: string, ok: () => boolean): Promise<void> {
  await eventually(what, () => (ok() ? true : undefined), 10_000, 10);
}

async function server(opts: { maxConcurrentReviews: number; maxInFlightBytes: number }): Promise<{
  server: WebhookServer;
  metrics: WebhookMetrics;
  gauge: ReturnType<typeof peaks>;
}> {
  const metrics = createMetrics(false);
  const gauge = peaks(metrics);
  const s = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: quiet,
    metrics,
    maxBodyBytes: MAX_BODY,
    ...opts,
  });
  return { server: s, metrics, gauge };
}

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('N+1 parallel maximum-size reviews: the extra one gets 429 with Retry-After, at most N are ever in flight', async (t) => {
  const N = 3;
  const {
    server: s,
    metrics,
    gauge,
  } = await server({ maxConcurrentReviews: N, maxInFlightBytes: N * MAX_BODY });
  t.after(() => s.close(1000));
  const big = reviewOf(MAX_BODY - 16);
  const held = Array.from({ length: N }, () => heldPost(s.port, big));
  await until(`${N} reviews admitted`, () => gauge.count() === N);
  const extra = heldPost(s.port, big);
  extra.finish();
  const refused = await extra.answer;
  assert.equal(refused.status, 429);
  assert.equal(refused.headers['retry-after'], String(RETRY_AFTER_SECONDS));
  for (const h of held) h.finish();
  const answers = await Promise.all(held.map((h) => h.answer));
  assert.deepEqual(
    answers.map((a) => a.status),
    Array.from({ length: N }, () => 200),
    'the admitted reviews complete',
  );
  assert.equal(gauge.maxCount(), N, 'never more than the cap in flight');
  assert.ok(gauge.maxBytes() <= N * MAX_BODY, `bytes in flight ${gauge.maxBytes()}`);
  await until('all released', () => gauge.count() === 0);
  const text = await metrics.registry.metrics();
  assert.match(text, /aiops_conversion_failures_total\{reason="overloaded"\} 1/);
  assert.match(text, /aiops_conversion_in_flight_requests 0/);
  assert.match(text, /aiops_conversion_in_flight_bytes 0/);
  const after = heldPost(s.port, reviewOf(2048));
  after.finish();
  assert.equal((await after.answer).status, 200, 'serving again once below the cap');
});

test('the byte budget: a third maximum-size review is refused (429) while a small one passes beside two', async (t) => {
  const budget = 2 * MAX_BODY + 64 * 1024;
  const { server: s, gauge } = await server({ maxConcurrentReviews: 8, maxInFlightBytes: budget });
  t.after(() => s.close(1000));
  const big = reviewOf(MAX_BODY - 16);
  const held = [heldPost(s.port, big), heldPost(s.port, big)];
  await until('two reviews admitted', () => gauge.count() === 2);
  const third = heldPost(s.port, big);
  third.finish();
  assert.equal((await third.answer).status, 429);
  const small = heldPost(s.port, reviewOf(2048));
  await until('the small review admitted', () => gauge.count() === 3);
  small.finish();
  assert.equal((await small.answer).status, 200);
  for (const h of held) h.finish();
  for (const h of held) assert.equal((await h.answer).status, 200);
  assert.equal(gauge.maxCount(), 3);
  assert.ok(gauge.maxBytes() <= budget, `bytes in flight ${gauge.maxBytes()}`);
});
