// The standalone webhook's command line (main.ts): its limits default to the constants the
// webhook hosted by the operator uses (8 MiB bodies, 8 reviews in flight), each settable
// by a flag; a value out of range is a usage error (exit 2). No cluster needed.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT_REVIEWS } from './server.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['conversion-webhook/main.ts', ...args], {
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
