// What a peer can make the webhook write to its log is bounded like what it can make it hold:
// every request it sends is still answered (413, a Failure), but a run of rejections from one
// address is one line per reason per minute (another address still gets its own line), and a
// run of refused conversions of one object is one line per minute.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookServer } from './server.ts';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';

const G = 'aiops.example.com';
const REQUESTS = 20;

test('rejections from one address and refusals of one object log one line per reason, each request still answered', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-log-'));
  const cert = createServingCert(join(dir, 'certs'));
  const lines: Record<string, unknown>[] = [];
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    stashKey: Buffer.alloc(32, 7),
    maxBodyBytes: 1024 * 1024,
    logger: createLogger('test', {
      level: 'warn',
      write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    }),
  });
  t.after(async () => {
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });
  const post = (body: string, localAddress = '127.0.0.1') =>
    httpsCall(server.port, '/convert', { ca: cert.caPem, body, localAddress });
  const said = (msg: string, peer: string) => lines.filter((l) => l['msg'] === msg && l['peer'] === peer);

  const tooLarge = 'x'.repeat(2 * 1024 * 1024);
  for (let i = 0; i < REQUESTS; i++) assert.equal((await post(tooLarge)).status, 413);
  const rejected = said('request rejected', '127.0.0.1');
  assert.equal(rejected.length, 1, JSON.stringify(lines));
  assert.equal(rejected[0]?.['reason'], 'body_too_large');
  assert.equal((await post(tooLarge, '127.0.0.2')).status, 413);
  assert.equal(said('request rejected', '127.0.0.2').length, 1, 'another address gets its own line');

  const deep = `{"apiVersion":"${G}/v2","kind":"AITask","metadata":{"name":"deep"},"spec":{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
  const review = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"r-deep","desiredAPIVersion":"${G}/v2","objects":[${deep}]}}`;
  for (let i = 0; i < REQUESTS; i++) {
    const r = await post(review);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /nested deeper than 32 levels/);
  }
  assert.equal(lines.filter((l) => l['msg'] === 'conversion refused').length, 1, JSON.stringify(lines));
  assert.equal(lines.length, 3, JSON.stringify(lines));
});
