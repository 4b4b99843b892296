// The webhook's capacity over real HTTPS, each peer on a loopback address of its own
// (127.0.0.2, …; all of 127/8 is loopback): reviews held open mid-body take no slot, so a
// review from another address converts beside them even with one slot; an address over its
// share is answered 429 with Retry-After (what the apiserver's client retries on) while
// another is served; with the total full, a small holder pushes out the biggest holder's
// newest request; headers that never end get 408. Asserted on the webhook's own gauges and
// answers, never on timing.

import { eventually } from '../test/harness/wait.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RETRY_AFTER_SECONDS } from './requests.ts';
import { startWebhookServer, type WebhookServer } from './server.ts';
import { createMetrics, type WebhookMetrics } from './metrics.ts';
import { createLogger } from '../lib/log.ts';
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

/**
 * A POST /convert from `from` (a loopback address) whose body is sent in two parts: the first
 * at once, the rest at `finish()`.
 */
function heldPost(
  port: number,
  body: Buffer,
  from = '127.0.0.1',
): { answer: Promise<Answer>; finish: () => void } {
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
        localAddress: from,
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
    headersTimeoutMs: 1000,
    ...opts,
  });
  return { server: s, metrics, gauge };
}

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('stalled bodies hold no slot: with one slot, a review from another address converts beside three held mid-body', async (t) => {
  const { server: s, gauge } = await server({ maxConcurrentReviews: 1, maxInFlightBytes: 4 * MAX_BODY });
  t.after(() => s.close(1000));
  const big = reviewOf(MAX_BODY - 16);
  const held = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((from) => heldPost(s.port, big, from));
  await until('three bodies being read', () => readingHolds(s) >= 3);
  assert.equal(gauge.count(), 0, 'no slot taken before a body is whole');
  const small = heldPost(s.port, reviewOf(2048));
  small.finish();
  const answer = await small.answer;
  assert.equal(answer.status, 200, answer.text);
  for (const h of held) h.finish();
  for (const h of held) assert.ok([200, 429].includes((await h.answer).status));
  assert.equal(gauge.maxCount(), 1, 'never more than the one slot');
});

test("an address over its share gets 429 with Retry-After; another address's review still converts", async (t) => {
  const { server: s, metrics } = await server({ maxConcurrentReviews: 8, maxInFlightBytes: MAX_BODY + 4096 });
  t.after(() => s.close(1000));
  const big = reviewOf(MAX_BODY - 16);
  const first = heldPost(s.port, big, '127.0.0.2');
  await until('the first held', () => readingHolds(s) >= 1);
  const second = heldPost(s.port, big, '127.0.0.2');
  second.finish();
  const refused = await second.answer;
  assert.equal(refused.status, 429);
  assert.equal(refused.headers['retry-after'], String(RETRY_AFTER_SECONDS));
  const other = heldPost(s.port, reviewOf(2048), '127.0.0.1');
  other.finish();
  assert.equal((await other.answer).status, 200);
  first.finish();
  assert.equal((await first.answer).status, 200);
  assert.match(await metrics.registry.metrics(), /aiops_conversion_failures_total\{reason="peer_share"\} 1/);
});

test("with the total full, a smaller holder pushes out the biggest holder's newest request", async (t) => {
  const budget = MAX_BODY;
  const { server: s } = await server({ maxConcurrentReviews: 8, maxInFlightBytes: budget });
  t.after(() => s.close(1000));
  const big = reviewOf(MAX_BODY - 16);
  const holders = ['127.0.0.2', '127.0.0.3'].map((from) => heldPost(s.port, big, from));
  await until('two addresses hold the total', () => readingHolds(s) >= 2);
  const small = heldPost(s.port, reviewOf(2048), '127.0.0.1');
  small.finish();
  assert.equal((await small.answer).status, 200, 'the small holder is served');
  for (const h of holders) h.finish();
  const statuses = await Promise.all(holders.map(async (h) => (await h.answer).status));
  assert.ok(statuses.includes(429), `one holder gave way: ${statuses.join()}`);
});

test('headers that never end get 408 and the connection closed', async (t) => {
  const { server: s } = await server({ maxConcurrentReviews: 8, maxInFlightBytes: MAX_BODY });
  t.after(() => s.close(1000));
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = tls.connect(
      {
        socket: net.connect({ host: '127.0.0.1', port: s.port, localAddress: '127.0.0.5' }),
        ca: cert.caPem,
        servername: 'localhost',
      },
      () => socket.write('POST /convert HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nX-Slow: '),
    );
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
  assert.match(answer, /^HTTP\/1.1 408/);
});

/** Requests holding a share now: the webhook's own count of the bytes its peers hold, in requests of MAX_BODY. */
function readingHolds(s: WebhookServer): number {
  return Math.floor(s.heldBytes() / (MAX_BODY - 16));
}
