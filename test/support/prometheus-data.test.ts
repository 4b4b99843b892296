import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { snappyLiterals, varint, writeRequest } from './prometheus-data.ts';

/** Decodes the snappy block format as far as literals go (what snappyLiterals writes). */
function unsnappy(bytes: Uint8Array): Uint8Array {
  let at = 0;
  let length = 0;
  for (let shift = 1; ; shift *= 0x80) {
    const b = bytes[at++] ?? 0;
    length += (b & 0x7f) * shift;
    if (b < 0x80) break;
  }
  const out: number[] = [];
  while (at < bytes.length) {
    const tag = bytes[at++] ?? 0;
    assert.equal(tag & 3, 0, 'a literal');
    let n = tag >> 2;
    if (n === 60) n = bytes[at++] ?? 0;
    else if (n === 61) n = (bytes[at++] ?? 0) | ((bytes[at++] ?? 0) << 8);
    out.push(...bytes.subarray(at, at + n + 1));
    at += n + 1;
  }
  assert.equal(out.length, length, 'the preamble says the length');
  return Uint8Array.from(out);
}

test('varint, snappyLiterals, writeRequest: table', () => {
  assert.deepEqual(varint(0), [0]);
  assert.deepEqual(varint(127), [127]);
  assert.deepEqual(varint(300), [0xac, 0x02]);
  assert.deepEqual(varint(1_700_000_000_000), [0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31]);
  assert.deepEqual([...snappyLiterals(new Uint8Array())], [0]);
  assert.deepEqual([...snappyLiterals(new TextEncoder().encode('abc'))], [3, 2 << 2, 97, 98, 99]);
  const name = [...new TextEncoder().encode('__name__')];
  const label = [0x0a, 8, ...name, 0x12, 1, 'm'.charCodeAt(0)];
  const sample = [0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x10, 2];
  const series = [0x0a, label.length, ...label, 0x12, sample.length, ...sample];
  assert.deepEqual(
    [...writeRequest([{ labels: { __name__: 'm' }, samples: [[2, 1]] }])],
    [0x0a, series.length, ...series],
  );
});

test('snappyLiterals (property): decodes to its input, across the literal length boundaries', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(0, 1, 59, 60, 61, 255, 256, 257, 0xffff, 0x10000, 0x10001, 150_000),
      fc.integer({ min: 0, max: 255 }),
      (n, seed) => {
        const data = Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
        assert.deepEqual(unsnappy(snappyLiterals(data)), data);
      },
    ),
    { numRuns: 40 },
  );
});
