// The byte bounds alone, without a socket: LineReader splits any chunking of a stream into the
// same lines (property test) and refuses a line past its bound with its head; AnswerBody keeps
// a body up to its bound and, past it, only the first RESPONSE_HEAD_BYTES bytes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AnswerBody, LineReader, LineTooLong, RESPONSE_HEAD_BYTES } from './bounded-read.ts';

test('LineReader yields the same lines however the stream is cut into chunks, and refuses a line past its bound', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.string({ unit: 'grapheme', maxLength: 40 }).map((l) => l.replaceAll('\n', '')),
        {
          maxLength: 20,
        },
      ),
      fc.array(fc.nat(), { maxLength: 10 }),
      (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const reader = new LineReader(1000);
        const out: string[] = [];
        let from = 0;
        for (const p of [...points, bytes.length]) {
          out.push(...reader.push(bytes.subarray(from, p)));
          from = p;
        }
        assert.deepEqual(out, lines);
      },
    ),
  );
  const reader = new LineReader(8);
  assert.deepEqual(reader.push(Buffer.from('12345678\n1234')), ['12345678']);
  assert.throws(() => reader.push(Buffer.from('56789')), /longer than 8 bytes/);
});

test('a line past the bound carries its first bytes', () => {
  const reader = new LineReader(RESPONSE_HEAD_BYTES * 2);
  assert.deepEqual(reader.push(Buffer.from('a'.repeat(RESPONSE_HEAD_BYTES))), []);
  assert.throws(
    () => reader.push(Buffer.from('b'.repeat(RESPONSE_HEAD_BYTES + 1))),
    (err: unknown) => err instanceof LineTooLong && err.head === 'a'.repeat(RESPONSE_HEAD_BYTES),
  );
});

test('AnswerBody reads a body up to its bound whole, and past it keeps only the head', () => {
  const fits = new AnswerBody(10);
  assert.equal(fits.push(Buffer.from('12345')), true);
  assert.equal(fits.push(Buffer.from('67890')), true);
  assert.equal(fits.text(), '1234567890');
  const over = new AnswerBody(RESPONSE_HEAD_BYTES * 2);
  assert.equal(over.push(Buffer.from('x'.repeat(RESPONSE_HEAD_BYTES - 1))), true);
  assert.equal(over.push(Buffer.from('y'.repeat(RESPONSE_HEAD_BYTES * 2))), false);
  assert.equal(over.head(), `${'x'.repeat(RESPONSE_HEAD_BYTES - 1)}y`);
});
