import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatGoDuration, parseGoDuration } from './go-duration.ts';

test('parseGoDuration: what time.ParseDuration accepts, in ms; the rest refused', () => {
  const table: [string, number | undefined][] = [
    ['0', 0],
    ['500ms', 500],
    ['15s', 15_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['2h45m', 9_900_000],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1.s', 1000],
    ['+10s', 10_000],
    ['1500us', 2],
    ['1500µs', 2],
    ['3000000ns', 3],
    ['1h0m0s', 3_600_000],
    ['', undefined],
    ['-1s', undefined],
    ['10', undefined],
    ['1 m', undefined],
    ['1d', undefined],
    ['s', undefined],
    ['1m30', undefined],
    ['1e3s', undefined],
  ];
  for (const [text, ms] of table) assert.equal(parseGoDuration(text), ms, text);
});

test('formatGoDuration writes what Go writes, and parseGoDuration reads it back (property)', () => {
  assert.equal(formatGoDuration(90_000), '1m30s');
  assert.equal(formatGoDuration(3_600_000), '1h0m0s');
  assert.equal(formatGoDuration(500), '500ms');
  assert.equal(formatGoDuration(1500), '1.5s');
  assert.equal(formatGoDuration(0), '0s');
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10 * 86_400_000 }), (ms) => {
      assert.equal(parseGoDuration(formatGoDuration(ms)), ms);
    }),
  );
});
