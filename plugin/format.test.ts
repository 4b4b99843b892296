import assert from 'node:assert/strict';
import { test } from 'node:test';
import { age, palette, table } from './format.ts';

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
