import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { cutUtf8 } from './events.ts';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

test('cutUtf8: examples (1-, 2-, 3- and 4-byte characters at the boundary)', () => {
  const cases: [string, number, string][] = [
    ['abc', 3, 'abc'],
    ['abcd', 3, 'abc'],
    ['ééé', 5, 'éé'],
    ['ééé', 6, 'ééé'],
    ['€€', 5, '€'],
    ['😀😀', 7, '😀'],
    ['😀😀', 3, ''],
    ['a😀', 4, 'a'],
    ['x', 0, ''],
    ['', 10, ''],
  ];
  for (const [text, max, want] of cases) assert.equal(cutUtf8(text, max), want, `${text} to ${max} bytes`);
});

test('cutUtf8: the longest prefix that fits in the bytes, never half a code point', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 1500 }),
      fc.integer({ min: 0, max: 3000 }),
      (text, max) => {
        const cut = cutUtf8(text, max);
        assert.ok(text.startsWith(cut), 'a prefix');
        assert.ok(bytes(cut) <= max, 'fits');
        if (bytes(text) <= max) assert.equal(cut, text, 'what fits is kept whole');
        else {
          const next = String.fromCodePoint(text.codePointAt(cut.length) ?? 0);
          assert.ok(bytes(cut) + bytes(next) > max, 'the next code point would not fit');
        }
        const last = cut.charCodeAt(cut.length - 1);
        assert.ok(!(last >= 0xd800 && last <= 0xdbff), 'never ends in half a surrogate pair');
      },
    ),
    { numRuns: 2000 },
  );
});
