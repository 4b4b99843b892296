// `npm test`'s command line: files and --busy forms, table; the busy files' order, table and
// property.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { busyOrder, parseTestArgs, runsBusy, type TestArgs } from './args.ts';

test('parseTestArgs: files and the --busy forms, table', () => {
  const cases: [string[], TestArgs][] = [
    [[], { files: [], busy: [] }],
    [['a.test.ts', 'b.test.ts'], { files: ['a.test.ts', 'b.test.ts'], busy: [] }],
    [['--busy'], { files: [], busy: [''] }],
    [['a.test.ts', '--busy'], { files: ['a.test.ts'], busy: [''] }],
    [['--busy=test/attacks/,operator/llm/'], { files: [], busy: ['test/attacks/', 'operator/llm/'] }],
    [['--busy=test/attacks/,,'], { files: [], busy: ['test/attacks/'] }],
    [['--busy=', 'x.test.ts'], { files: ['x.test.ts'], busy: [] }],
    [['--busy=a/', '--busy'], { files: [], busy: [''] }],
    [['--busy', '--busy=a/'], { files: [], busy: ['a/'] }],
  ];
  for (const [argv, want] of cases) assert.deepEqual(parseTestArgs(argv), want, argv.join(' '));
});

test('runsBusy: by path prefix; the empty prefix takes every file, no prefix none', () => {
  assert.equal(runsBusy([''], 'api/x.test.ts'), true);
  assert.equal(runsBusy([], 'api/x.test.ts'), false);
  assert.equal(runsBusy(['test/attacks/', 'operator/llm/'], 'operator/llm/advisor.test.ts'), true);
  assert.equal(runsBusy(['test/attacks/', 'operator/llm/'], 'operator/llm.test.ts'), false);
  assert.equal(runsBusy(['test/attacks/'], 'test/attacks/shares.test.ts'), true);
});

test('busyOrder: by the first prefix each file matches, then in the given order, table', () => {
  const files = ['operator/llm/a.test.ts', 'operator/llm/b.test.ts', 'test/attacks/x.test.ts', 'z.test.ts'];
  assert.deepEqual(busyOrder(['test/attacks/', 'operator/llm/'], files), [
    'test/attacks/x.test.ts',
    'operator/llm/a.test.ts',
    'operator/llm/b.test.ts',
  ]);
  assert.deepEqual(busyOrder([''], files), files);
  assert.deepEqual(busyOrder([], files), []);
  assert.deepEqual(busyOrder(['operator/', 'operator/llm/'], files), [
    'operator/llm/a.test.ts',
    'operator/llm/b.test.ts',
  ]);
});

test('busyOrder: exactly the files runsBusy takes, each once, property', () => {
  const path = fc.constantFrom('a/', 'a/b/', 'c/', '');
  fc.assert(
    fc.property(
      fc.array(path, { maxLength: 4 }),
      fc.uniqueArray(fc.tuple(path, fc.constantFrom('x', 'y', 'z')).map(([d, f]) => `${d}${f}.test.ts`)),
      (busy, files) => {
        const ordered = busyOrder(busy, files);
        assert.deepEqual([...ordered].sort(), files.filter((f) => runsBusy(busy, f)).sort());
        const rank = (f: string): number => busy.findIndex((p) => f.startsWith(p));
        for (let i = 1; i < ordered.length; i++)
          assert.ok(rank(ordered[i - 1] ?? '') <= rank(ordered[i] ?? ''), ordered.join(' '));
      },
    ),
  );
});
