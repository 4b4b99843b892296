import assert from 'node:assert/strict';
import test from 'node:test';
import { MAX_RETRY_AFTER_MS, pause, retryAfterMs } from './retry-after.ts';

test('retryAfterMs: which answers are sent again, and after how long', () => {
  const cases: [number, string | string[] | undefined, number | undefined][] = [
    [429, '1', 1000],
    [429, ' 2 ', 2000],
    [503, '0', 0],
    [500, '3', 3000],
    [429, ['4', '9'], 4000],
    [429, '3600', MAX_RETRY_AFTER_MS],
    [429, undefined, undefined],
    [503, undefined, undefined],
    [429, 'Wed, 21 Oct 2026 07:28:00 GMT', undefined],
    [429, '-1', undefined],
    [429, '1.5', undefined],
    [429, '9999999', undefined],
    [409, '1', undefined],
    [404, '1', undefined],
    [200, '1', undefined],
  ];
  for (const [status, header, want] of cases)
    assert.equal(retryAfterMs(status, header), want, `${status} Retry-After ${JSON.stringify(header)}`);
});

test('pause ends at once when its signal aborts', async () => {
  const ac = new AbortController();
  const started = performance.now();
  const waiting = pause(60_000, ac.signal);
  ac.abort();
  await waiting;
  assert.ok(performance.now() - started < 30_000);
  await pause(1, undefined);
});
