// The standalone webhook's command line (cmd/webhook.ts): its limits default to the constants the
// webhook hosted by the operator uses (8 MiB bodies, 8 reviews in flight), each settable
// by a flag; a value out of range is a usage error (exit 2); its metrics are on a port of
// their own, never on the webhook's. No cluster needed.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT_REVIEWS } from '../conversion-webhook/server.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['cmd/webhook.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
}

test('--max-body-bytes and --max-concurrent-reviews default to the hosted webhook constants', () => {
  assert.equal(DEFAULT_MAX_BODY_BYTES, 8 * 1024 * 1024);
  assert.equal(DEFAULT_MAX_CONCURRENT_REVIEWS, 8);
  const help = run('--help');
  assert.equal(help.status, 0, help.stderr);
  const flat = help.stdout.replace(/\s+/g, ' ');
  assert.match(
    flat,
    /--max-body-bytes <n> largest accepted request body in bytes \(8 MiB[^)]*\)[^(]*\(default: 8388608\)/,
  );
  assert.match(flat, /--max-concurrent-reviews <n> most ConversionReviews[^(]*\([^)]*\)[^(]*\(default: 8\)/);
});

test('a limit out of range is a usage error (exit 2)', () => {
  for (const [flag, message] of [
    ['--max-concurrent-reviews=0', /--max-concurrent-reviews must be an integer ≥ 1/],
    ['--max-body-bytes=10', /--max-body-bytes must be an integer ≥ 1024/],
  ] as const) {
    const r = run(flag);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
  }
});

test('--metrics-port serves the metrics over plain HTTP on loopback; the webhook port serves none', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-main-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = createServingCert(dir);
  const child = spawn(
    process.execPath,
    ['cmd/webhook.ts', '--port=0', `--cert-dir=${dir}`, '--metrics-port=0', '--bind-address=127.0.0.1'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.after(() => child.kill('SIGKILL'));
  const ports: Record<string, number> = {};
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const scan = (chunk: Buffer): void => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        const entry = /^\{/.test(line) ? (JSON.parse(line) as { msg?: string; port?: number }) : {};
        if (entry.msg === 'conversion webhook listening' && entry.port) ports['webhook'] = entry.port;
        if (entry.msg === 'serving /metrics' && entry.port) ports['metrics'] = entry.port;
      }
      if (ports['webhook'] && ports['metrics']) resolve();
    };
    child.stdout.on('data', scan);
    child.stderr.on('data', scan);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  const metrics = await fetch(`http://127.0.0.1:${ports['metrics']}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /^aiops_conversion_failures_total\{reason="peer_share"\} 0$/m);
  const onWebhook = await httpsCall(ports['webhook'] ?? 0, '/metrics', { ca: cert.caPem });
  assert.equal(onWebhook.status, 404);
});
