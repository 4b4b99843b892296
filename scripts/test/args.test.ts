// `npm test`'s command line: files and --busy forms, table.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTestArgs, runsBusy, type TestArgs } from './args.ts';

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
  assert.equal(runsBusy(['test/attacks/', 'operator/llm/'], 'operator/llm/advisor.cluster.test.ts'), true);
  assert.equal(runsBusy(['test/attacks/', 'operator/llm/'], 'operator/llm.test.ts'), false);
  assert.equal(runsBusy(['test/attacks/'], 'test/attacks/shares.test.ts'), true);
});
