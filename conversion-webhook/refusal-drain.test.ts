// A refused request's answer reaches a client that sends its whole body before reading, as
// HTTP/1.1 clients without `Expect: 100-continue` do: the webhook reads and drops the body
// (up to twice its limit) before answering 413 or 429, so its close is clean, not a reset
// that makes the client's kernel drop the answer unread. Past that bound, or past the
// body's deadline, it answers at once. Each case is a raw TLS client that starts reading
// only once every byte it sends is written, and sends the rest of its body only once the
// webhook has counted the refusal (when a close at once would come); asserted on the answer
// it reads. What is read this way has a share per address and a total (refusals.ts): beyond
// them a refusal is answered at once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookServer, type WebhookServer } from './server.ts';
import { RETRY_AFTER_SECONDS } from './requests.ts';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { eventually } from '../test/harness/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-drain-'));
const cert = createServingCert(join(dir, 'a'));
const quiet = createLogger('test', { level: 'error' });
const MAX_BODY = 64 * 1024;
const CHUNK = 16 * 1024;

test.after(() => rmSync(dir, { recursive: true, force: true }));

async function webhook(
  opts: { maxInFlightBytes?: number; requestTimeoutMs?: number } = {},
): Promise<WebhookServer> {
  return startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: quiet,
    maxBodyBytes: MAX_BODY,
    requestTimeoutMs: 1000,
    headersTimeoutMs: 5000,
    ...opts,
  });
}

interface Exchange {
  /** Everything read from the connection, from the first byte to its end. */
  text: string;
  /** The connection's error, if it ended in one (a reset), else undefined. */
  error: string | undefined;
}

interface Sending {
  /** Loopback address to send from (default 127.0.0.1). */
  from?: string;
  /** Chunks sent before the client stops sending and reads (default all). */
  stallAfter?: number;
  /** Awaited once `chunks` chunks are taken, before the rest is sent. */
  pause?: { chunks: number; until: () => Promise<void> };
}

/**
 * Sends `head`, then `chunks` (each written once the one before is taken), and only then
 * reads: every answer byte the webhook sent must still be there.
 */
function sendThenRead(
  port: number,
  head: string,
  chunks: Buffer[],
  sending: Sending = {},
): Promise<Exchange> {
  const stallAfter = sending.stallAfter ?? chunks.length;
  return new Promise((resolve) => {
    const socket = tls.connect({
      socket: net.connect({ host: '127.0.0.1', port, localAddress: sending.from ?? '127.0.0.1' }),
      ca: cert.caPem,
      servername: 'localhost',
    });
    socket.pause();
    let text = '';
    let error: string | undefined;
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on('close', () => resolve({ text, error }));
    const write = (i: number): void => {
      if (i >= stallAfter || socket.destroyed) {
        socket.resume();
        return;
      }
      socket.write(chunks[i] ?? Buffer.alloc(0), () => {
        if (i + 1 === sending.pause?.chunks) void sending.pause.until().then(() => write(i + 1));
        else write(i + 1);
      });
    };
    socket.once('secureConnect', () => socket.write(head, () => write(0)));
  });
}

/** Waits until the webhook has counted `n` refusals for `reason`: it has decided, and an early close would come now. */
function refused(s: WebhookServer, reason: string, n = 1): () => Promise<void> {
  return async () => {
    await eventually(
      `${n} refusal(s) for ${reason} counted`,
      async () =>
        (await s.metrics.registry.metrics()).includes(
          `aiops_conversion_failures_total{reason="${reason}"} ${n}`,
        )
          ? true
          : undefined,
      10_000,
      10,
    );
  };
}

const postHead = (length: number | 'chunked'): string =>
  'POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  (length === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
  '\r\n';

/** `total` bytes of body in CHUNK-sized pieces. */
const bodyOf = (total: number): Buffer[] =>
  Array.from({ length: Math.ceil(total / CHUNK) }, (_, i) =>
    Buffer.alloc(Math.min(CHUNK, total - i * CHUNK), 'x'),
  );

test('a body over the limit, sent whole before reading: 413 read in full, the connection closed cleanly', async (t) => {
  const s = await webhook();
  t.after(() => s.close(1000));
  const total = MAX_BODY + MAX_BODY / 2;
  const r = await sendThenRead(s.port, postHead(total), bodyOf(total), {
    pause: { chunks: 1, until: refused(s, 'body_too_large') },
  });
  assert.match(r.text, /^HTTP\/1.1 413 /);
  assert.match(r.text, /\r\nconnection: close\r\n/i);
  assert.match(r.text, /"code":413,"message":"request body of 98304 bytes exceeds the limit of 65536"/);
  assert.equal(r.error, undefined, 'no reset');
});

test('a chunked body that grows over the limit, sent whole before reading: 413 read in full', async (t) => {
  const s = await webhook();
  t.after(() => s.close(1000));
  const chunked = bodyOf(MAX_BODY + MAX_BODY / 2).map((c) =>
    Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]),
  );
  const r = await sendThenRead(s.port, postHead('chunked'), [...chunked, Buffer.from('0\r\n\r\n')], {
    pause: { chunks: 5, until: refused(s, 'body_too_large') },
  });
  assert.match(r.text, /^HTTP\/1.1 413 /);
  assert.match(r.text, /request body exceeds the limit of 65536 bytes/);
  assert.equal(r.error, undefined, 'no reset');
});

test("a request over its address's share, sent whole before reading: 429 with Retry-After read in full", async (t) => {
  const s = await webhook({ maxInFlightBytes: MAX_BODY });
  t.after(() => s.close(1000));
  const holder = sendThenRead(s.port, postHead(MAX_BODY), bodyOf(MAX_BODY), {
    from: '127.0.0.2',
    stallAfter: 1,
  });
  await eventually('the first request holds the share', () => (s.heldBytes() >= MAX_BODY ? true : undefined));
  const r = await sendThenRead(s.port, postHead(MAX_BODY), bodyOf(MAX_BODY), {
    from: '127.0.0.2',
    pause: { chunks: 1, until: refused(s, 'peer_share') },
  });
  assert.match(r.text, /^HTTP\/1.1 429 /);
  assert.match(r.text, new RegExp(`\\r\\nretry-after: ${RETRY_AFTER_SECONDS}\\r\\n`, 'i'));
  assert.equal(r.error, undefined, 'no reset');
  assert.match((await holder).text, /^HTTP\/1.1 408 /, 'the stalled holder is cut off by its deadline');
});

test('a body declared over twice the limit is refused at once, before any of it is sent', async (t) => {
  const s = await webhook();
  t.after(() => s.close(1000));
  const r = await sendThenRead(s.port, postHead(2 * MAX_BODY + 1), []);
  assert.match(r.text, /^HTTP\/1.1 413 /);
  assert.match(r.text, /request body of 131073 bytes exceeds/);
});

test('a refused body that stops arriving is answered at its deadline, not waited on', async (t) => {
  const s = await webhook();
  t.after(() => s.close(1000));
  const total = MAX_BODY + 1;
  const r = await sendThenRead(s.port, postHead(total), bodyOf(total), { stallAfter: 1 });
  assert.match(r.text, /^HTTP\/1.1 413 /);
});

test('refused bodies are read per address and in all within their shares; beyond, the refusal is answered at once', async (t) => {
  const s = await webhook({ requestTimeoutMs: 10_000 });
  t.after(() => s.close(0));
  const declared = 2 * MAX_BODY;
  let settled = 0;
  const holders = [2, 3, 4, 5].map((i) =>
    sendThenRead(s.port, postHead(declared), bodyOf(declared), {
      from: `127.0.0.${i}`,
      stallAfter: 1,
    }).finally(() => settled++),
  );
  await refused(s, 'body_too_large', 4)();
  const sameAddress = await sendThenRead(s.port, postHead(declared), [], { from: '127.0.0.2' });
  assert.match(sameAddress.text, /^HTTP\/1.1 413 /, 'its address holds its share: answered at once');
  const fifth = await sendThenRead(s.port, postHead(declared), [], { from: '127.0.0.6' });
  assert.match(fifth.text, /^HTTP\/1.1 413 /, 'all shares are held: answered at once');
  assert.equal(settled, 0, 'while the four holders are still being read, up to their deadline');
  await s.close(0);
  await Promise.all(holders);
});
