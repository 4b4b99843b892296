// StringPool: interning never changes a value (property test over JSON data), the pool stays
// within its bound, long strings are never pooled, and bad sizes are refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_INTERNED_LENGTH, StringPool } from './intern.ts';

test('internAll leaves any JSON value deep-equal to what it was', () => {
  const pool = new StringPool(8);
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const copy = structuredClone(value);
      assert.deepEqual(pool.internAll(copy), value);
    }),
  );
});

test('the pool never holds more than its bound and starts over when full', () => {
  const pool = new StringPool(3);
  const seen: number[] = [];
  for (const s of ['a', 'b', 'a', 'c', 'd', 'e', 'd']) {
    assert.equal(pool.intern(s), s);
    seen.push(pool.size);
  }
  assert.deepEqual(seen, [1, 2, 2, 3, 1, 2, 2]);
});

test('internAll walks nested objects and arrays and keeps non-strings', () => {
  const pool = new StringPool();
  const obj = { a: ['x', 1, null, { b: 'y', c: true }], d: { e: ['x'] } };
  assert.deepEqual(pool.internAll(structuredClone(obj)), obj);
  assert.equal(pool.size, 2);
});

test('a pool size that is not a whole number ≥ 1 is refused', () => {
  for (const bad of [0, -1, 1.5, Number.NaN])
    assert.throws(() => new StringPool(bad), /string pool size must be a whole number ≥ 1/);
});

test('long strings are not pooled', () => {
  const pool = new StringPool();
  const long = 'x'.repeat(MAX_INTERNED_LENGTH + 1);
  assert.equal(pool.intern(long), long);
  assert.equal(pool.size, 0);
  pool.intern('x'.repeat(MAX_INTERNED_LENGTH));
  assert.equal(pool.size, 1);
});
