import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fromYaml } from '../lib/yaml.ts';
import { age, jsonDoc, palette, table, terminalSafe, visible, visibleDeep, yamlDoc } from './format.ts';

void test('age prints kubectl-style durations', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  const ago = (s: number): string => new Date(now.getTime() - s * 1000).toISOString();
  const cases: [number, string][] = [
    [5, '5s'],
    [119, '119s'],
    [150, '2m30s'],
    [600, '10m'],
    [179 * 60, '179m'],
    [5 * 3600 + 180, '5h3m'],
    [30 * 3600, '30h'],
    [3 * 86400 + 4 * 3600, '3d4h'],
    [9 * 86400, '9d'],
  ];
  for (const [s, want] of cases) assert.equal(age(ago(s), now), want, String(s));
  assert.equal(age(undefined, now), '<unknown>');
  assert.equal(age(ago(-30), now), '0s');
});

void test('table aligns columns three spaces apart without borders or trailing blanks', () => {
  assert.equal(
    table(
      ['Type', 'Status'],
      [
        ['Ready', 'True'],
        ['Stalled', 'False'],
      ],
      '  ',
    ),
    '  TYPE      STATUS\n  Ready     True\n  Stalled   False\n',
  );
});

void test('palette colours only when enabled', () => {
  assert.equal(palette(false).red('x'), 'x');
  assert.equal(palette(true).red('x'), '\u001b[31mx\u001b[39m');
});

/** Characters a tenant may smuggle into a field: controls, escapes, bidi and zero-width, lone surrogates. */
const nasty = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '\u001b',
      '\u0007',
      '\n',
      '\t',
      '\r',
      '\u0000',
      '\u007f',
      '\u0085',
      '\u009b',
      '\u009d',
      '\u202e',
      '\u2066',
      '\u2069',
      '\u200b',
      '\u2028',
      '\u2029',
      '\ufeff',
      '\ud800',
      '\udfff',
      '\u{e0041}',
      '[',
      '31m',
      ']52;c;',
      '\\',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 40,
});
/** Every character that does not print as itself (the class visible escapes). */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const ESC = '\u001b';
const PALETTE_SGR = new RegExp(`^${ESC}\\[(?:1|2|22|31|32|33|36|39)m`);

void test('visible leaves no character that does not print as itself, and keeps printable text', () => {
  const cases: [string, string][] = [
    ['plain', 'plain'],
    ['a\u001b[2Jb', 'a\\x1b[2Jb'],
    ['\u001b]52;c;ZXZpbA==\u0007', '\\x1b]52;c;ZXZpbA==\\x07'],
    ['line\nfake: row\tcol\r', 'line\\nfake: row\\tcol\\r'],
    ['\u009b31m\u0085', '\\u009b31m\\u0085'],
    ['abc\u202edef\u2066', 'abc\\u202edef\\u2066'],
    ['\u2028\u200b\ufeff\u007f', '\\u2028\\u200b\\ufeff\\u007f'],
    ['tag\u{e0041}', 'tag\\udb40\\udc41'],
    ['lone\ud800', 'lone\\ud800'],
    ['ünïcode → ✓ 日本', 'ünïcode → ✓ 日本'],
  ];
  for (const [input, want] of cases) assert.equal(visible(input), want, JSON.stringify(input));
  fc.assert(
    fc.property(nasty, (s) => {
      const v = visible(s);
      assert.ok(!HIDDEN.test(v), JSON.stringify(v));
      if (!HIDDEN.test(s)) assert.equal(v, s);
    }),
    { seed: 22, numRuns: 2000 },
  );
});

void test('visibleDeep escapes every string of a value, keys included, and nothing else', () => {
  assert.deepEqual(visibleDeep({ 'k\n': ['a\u001b', 1, true, null, { m: 'b\u202e' }] }), {
    'k\\n': ['a\\x1b', 1, true, null, { m: 'b\\u202e' }],
  });
});

void test('terminalSafe keeps only the layout newlines and tabs and, with colour, the palette', () => {
  assert.equal(terminalSafe('a\n\tb\u001b[31mc\u001b[39m', false), 'a\n\tb\\x1b[31mc\\x1b[39m');
  assert.equal(terminalSafe('a\u001b[31mc\u001b[39m\u001b[8m', true), 'a\u001b[31mc\u001b[39m\\x1b[8m');
  assert.equal(terminalSafe('\u001b]8;;http://x\u001b\\', true), '\\x1b]8;;http://x\\x1b\\');
  fc.assert(
    fc.property(nasty, fc.boolean(), (s, colour) => {
      const out = terminalSafe(s, colour);
      let i = 0;
      for (const c of out) {
        if (c !== '\n' && c !== '\t' && HIDDEN.test(c))
          assert.ok(colour && PALETTE_SGR.test(out.slice(i)), JSON.stringify(out));
        i += c.length;
      }
    }),
    { seed: 22, numRuns: 2000 },
  );
});

void test('JSON stays valid and exact through terminalSafe; YAML keeps format characters as escapes', () => {
  const value = { a: 'x\u001b\u0007\u0085\u202e\u2028\u{e0041}\ud800y', b: ['\u009b2J'] };
  const json = terminalSafe(jsonDoc(value), false);
  assert.ok(!HIDDEN.test(json.replace(/\n/g, '')));
  assert.deepEqual(JSON.parse(json), value);
  const yaml = terminalSafe(yamlDoc({ a: value.a.replace('\ud800', ''), b: value.b }), false);
  assert.ok(!HIDDEN.test(yaml.replace(/\n/g, '')));
  assert.deepEqual(fromYaml(yaml), { a: value.a.replace('\ud800', ''), b: value.b });
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ maxLength: 5 }), nasty, { maxKeys: 4, noNullPrototype: true }),
      (doc) => {
        assert.deepEqual(JSON.parse(terminalSafe(jsonDoc(doc), false)), doc);
      },
    ),
    { seed: 22, numRuns: 500 },
  );
});
