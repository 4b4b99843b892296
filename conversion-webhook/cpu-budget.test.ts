// Conversion time per remote address and in all (cpu-budget.ts): the burst, the debt a long
// review leaves and the Retry-After it makes, addresses apart; the total's debt refusing every
// address, a large review waiting longer for it than a small one; the total split between the
// addresses asking; a simulation of many addresses converting back to back that together take
// no more than the total while a small review once a second still converts. Then over real
// HTTPS, an address in debt is answered 429 (counted cpu_share) while another address (the
// apiserver's, say) still converts, a total in debt answers 429 (cpu_total), and malformed
// reviews are counted as such, never as failed conversions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ACTIVE_WINDOW_MS,
  CpuBudget,
  DEFAULT_CPU_ADDRESSES,
  DEFAULT_CPU_BURST_MS,
  DEFAULT_CPU_MS_PER_SECOND,
  DEFAULT_CPU_TOTAL_BURST_MS,
  DEFAULT_CPU_TOTAL_MS_PER_SECOND,
} from './cpu-budget.ts';
import { startWebhookServer } from './server.ts';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';

const wait = (cpu: CpuBudget, peer: string): number => cpu.refusal(peer, 0)?.retryAfterSeconds ?? 0;

test('CpuBudget: burst, debt paid back at the rate, Retry-After, addresses apart', () => {
  let now = 0;
  const cpu = new CpuBudget(
    { msPerSecond: 250, burstMs: 1000, totalMsPerSecond: 1000, totalBurstMs: 4000, addresses: 4 },
    () => now,
  );
  assert.equal(wait(cpu, 'a'), 0);
  cpu.charge('a', 600);
  assert.equal(wait(cpu, 'a'), 0, '400 ms left');
  cpu.charge('a', 1400);
  assert.deepEqual(
    cpu.refusal('a', 0),
    { share: 'address', retryAfterSeconds: 4 },
    '1000 ms of debt at 250 ms/s',
  );
  assert.equal(wait(cpu, 'apiserver'), 0, 'another address keeps its own budget');
  now = 3000;
  assert.equal(wait(cpu, 'a'), 1);
  now = 4100;
  assert.equal(wait(cpu, 'a'), 0);
  cpu.charge('a', -5);
  assert.equal(wait(cpu, 'a'), 0, 'a negative time charges nothing');
});

test('CpuBudget: all addresses together in debt of the total are refused, each told when the total is paid back', () => {
  let now = 0;
  const cpu = new CpuBudget(
    { msPerSecond: 250, burstMs: 2500, totalMsPerSecond: 500, totalBurstMs: 1000, addresses: 16 },
    () => now,
  );
  cpu.charge('127.0.0.2', 900);
  cpu.charge('127.0.0.3', 1100);
  assert.deepEqual(
    cpu.refusal('127.0.0.4', 0),
    { share: 'total', retryAfterSeconds: 2 },
    '1000 ms of debt at 500 ms/s',
  );
  assert.deepEqual(
    cpu.refusal('127.0.0.5', 8 * 1024 * 1024),
    { share: 'total', retryAfterSeconds: 4 },
    'an 8 MiB review waits until the total holds what it is expected to take (capped at its burst)',
  );
  now = 2100;
  assert.equal(cpu.refusal('127.0.0.4', 4096), undefined, 'paid back: a small review converts');
  assert.equal(cpu.refusal('127.0.0.5', 8 * 1024 * 1024)?.share, 'total', 'a large one waits on');
});

test('CpuBudget: the total is split between the addresses using it, and the split follows them', () => {
  let now = 0;
  const cpu = new CpuBudget(
    { msPerSecond: 250, burstMs: 2500, totalMsPerSecond: 500, totalBurstMs: 5000, addresses: 16 },
    () => now,
  );
  for (let i = 2; i <= 5; i++) cpu.charge(`127.0.0.${i}`, 1);
  assert.equal(cpu.active, 4);
  cpu.charge('127.0.0.2', 900);
  assert.equal(
    cpu.refusal('127.0.0.2', 0),
    undefined,
    'four addresses and one more part: 1,000 ms each, 100 left',
  );
  cpu.charge('127.0.0.2', 300);
  assert.deepEqual(
    cpu.refusal('127.0.0.2', 0),
    { share: 'address', retryAfterSeconds: 2 },
    '200 ms of debt, paid back at 500/5 = 100 ms/s',
  );
  now = ACTIVE_WINDOW_MS + 1;
  cpu.charge('127.0.0.2', 0);
  assert.equal(cpu.active, 1, 'the others, idle for the window, no longer count');
});

test('CpuBudget (simulation): 1, 2, 8 or 64 addresses converting 8 MiB reviews back to back take at most the total together; the apiserver converts its small review once a second within its retries', () => {
  const limits = {
    msPerSecond: DEFAULT_CPU_MS_PER_SECOND,
    burstMs: DEFAULT_CPU_BURST_MS,
    totalMsPerSecond: DEFAULT_CPU_TOTAL_MS_PER_SECOND,
    totalBurstMs: DEFAULT_CPU_TOTAL_BURST_MS,
    addresses: DEFAULT_CPU_ADDRESSES,
  };
  for (const attackers of [1, 2, 8, 64]) {
    let now = 0;
    const cpu = new CpuBudget(limits, () => now);
    const REVIEW_MS = 1_200;
    const HONEST_MS = 5;
    const seconds = 600;
    let taken = 0;
    let honestDone = 0;
    let attempts = 0;
    let mostAttempts = 0;
    let honestNext = 0;
    for (now = 0; now < seconds * 1000; now += 10) {
      for (let i = 0; i < attackers; i++) {
        const peer = `127.0.1.${i}`;
        if (cpu.refusal(peer, 8 * 1024 * 1024) !== undefined) continue;
        cpu.charge(peer, REVIEW_MS);
        taken += REVIEW_MS;
      }
      if (now < honestNext) continue;
      attempts++;
      const refused = cpu.refusal('apiserver', 4096);
      if (refused !== undefined) {
        honestNext = now + refused.retryAfterSeconds * 1000;
        continue;
      }
      cpu.charge('apiserver', HONEST_MS);
      taken += HONEST_MS;
      honestDone++;
      mostAttempts = Math.max(mostAttempts, attempts);
      attempts = 0;
      honestNext = now + 1000;
    }
    const bound = limits.totalBurstMs + limits.totalMsPerSecond * seconds + REVIEW_MS;
    assert.ok(taken <= bound, `${attackers} addresses: ${taken} ms taken, the total allows ${bound}`);
    assert.ok(
      honestDone >= seconds * 0.9,
      `${attackers} addresses: the apiserver converted ${honestDone} times`,
    );
    assert.ok(mostAttempts <= 10, `${attackers} addresses: the apiserver needed ${mostAttempts} attempts`);
  }
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

test('over HTTPS: while all addresses together are in debt, a review from a fresh address gets 429 with Retry-After, counted cpu_total', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-cpu-total-'));
  const cert = createServingCert(join(dir, 'certs'));
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('test', { level: 'error' }),
    stashKey: Buffer.alloc(32, 5),
    cpuTotalMsPerSecond: 1,
    cpuTotalBurstMs: 1,
  });
  try {
    const call = (body: string, localAddress: string) =>
      httpsCall(server.port, '/convert', { ca: cert.caPem, body, localAddress });
    const big = review(
      'v2',
      Array.from({ length: 500 }, (_, i) => v1(i)),
    );
    assert.equal((await call(big, '127.0.0.2')).status, 200, 'the total holds one review');
    const refused = await call(review('v2', [v1(1)]), '127.0.0.3');
    assert.equal(refused.status, 429);
    assert.match(refused.headers['retry-after'] ?? '', /^\d+$/);
    assert.match(
      refused.text,
      /all callers together have used the webhook's conversion time; retry in \d+ s/,
    );
    const text = await server.metrics.registry.metrics();
    assert.match(text, /aiops_conversion_failures_total\{reason="cpu_total"\} 1\n/);
    assert.match(text, /aiops_conversion_failures_total\{reason="cpu_share"\} 0\n/);
    const spent = /^aiops_conversion_cpu_seconds_total (\S+)$/m.exec(text)?.[1];
    assert.ok(Number(spent) > 0, `conversion time counted: ${spent}`);
  } finally {
    await server.close(0);
    rmSync(dir, { recursive: true, force: true });
  }
});
