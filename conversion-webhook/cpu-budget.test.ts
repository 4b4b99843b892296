// Conversion time per remote address (cpu-budget.ts): the burst, the debt a long review leaves
// and the Retry-After it makes, addresses apart; then over real HTTPS, an address in debt is
// answered 429 (counted cpu_share) while another address (the apiserver's, say) still
// converts, and malformed reviews are counted as such, never as failed conversions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CpuBudget } from './cpu-budget.ts';
import { startWebhookServer } from './server.ts';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';

test('CpuBudget: burst, debt paid back at the rate, Retry-After, addresses apart', () => {
  let now = 0;
  const cpu = new CpuBudget({ msPerSecond: 250, burstMs: 1000, addresses: 4 }, () => now);
  assert.equal(cpu.retryAfterSeconds('a'), 0);
  cpu.charge('a', 600);
  assert.equal(cpu.retryAfterSeconds('a'), 0, '400 ms left');
  cpu.charge('a', 1400);
  assert.equal(cpu.retryAfterSeconds('a'), 4, '1000 ms of debt at 250 ms/s');
  assert.equal(cpu.retryAfterSeconds('apiserver'), 0, 'another address keeps its own budget');
  now = 3000;
  assert.equal(cpu.retryAfterSeconds('a'), 1);
  now = 4100;
  assert.equal(cpu.retryAfterSeconds('a'), 0);
  cpu.charge('a', -5);
  assert.equal(cpu.retryAfterSeconds('a'), 0, 'a negative time charges nothing');
});

const G = 'aiops.example.com';
const review = (desired: string, objects: unknown[]): string =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'r-1', desiredAPIVersion: `${G}/${desired}`, objects },
  });
const v1 = (i: number) => ({
  apiVersion: `${G}/v1`,
  kind: 'AITask',
  metadata: { name: `t${i}`, namespace: 'ns', uid: `u${i}` },
  spec: { targetDeployment: 'web', threshold: 0.5, action: 'noop', intervalSeconds: 60 },
});

test('over HTTPS: an address in debt gets 429 while another converts; malformed reviews are not failed conversions', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-cpu-'));
  const cert = createServingCert(join(dir, 'certs'));
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('test', { level: 'error' }),
    stashKey: Buffer.alloc(32, 5),
    cpuMsPerSecond: 1,
    cpuBurstMs: 1,
  });
  try {
    const call = (body: string, localAddress: string) =>
      httpsCall(server.port, '/convert', { ca: cert.caPem, body, localAddress });
    const big = review(
      'v2',
      Array.from({ length: 500 }, (_, i) => v1(i)),
    );
    assert.equal((await call(big, '127.0.0.2')).status, 200, 'the burst converts one review');
    const refused = await call(big, '127.0.0.2');
    assert.equal(refused.status, 429);
    assert.match(refused.text, /used its share of conversion time; retry in \d+ s/);
    assert.equal((await call(review('v2', [v1(1)]), '127.0.0.3')).status, 200, 'another address converts');

    const malformed = [
      review('v2', [{ apiVersion: `${G}/v1`, kind: 'AITask', metadata: { name: 'x' } }]),
      review('v2', [{ ...v1(2), kind: 'Pod' }]),
      review('v9', [v1(3)]),
      review('v2', [{ ...v1(4), apiVersion: `${G}/v7` }]),
      JSON.stringify({ kind: 'Nope' }),
    ];
    for (const [i, body] of malformed.entries()) await call(body, `127.0.1.${i + 1}`);
    const text = await server.metrics.registry.metrics();
    assert.match(text, /aiops_conversion_failures_total\{reason="cpu_share"\} 1\n/);
    assert.match(text, /aiops_conversion_failures_total\{reason="malformed"\} 5\n/);
    assert.match(text, /aiops_conversion_failures_total\{reason="conversion"\} 0\n/);
  } finally {
    await server.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
