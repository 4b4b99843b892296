// The slowest-files summary of `npm test`: parsing the reporter's lines and ranking them
// (pure), and the reporter itself on a real `node --test` run of two files.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { minutes, parseFileTimes, slowestLines, type FileTime } from './file-times.ts';

test('parseFileTimes keeps whole records and skips the rest, table', () => {
  const cases: [string, string, FileTime[]][] = [
    ['empty', '', []],
    ['one', '{"file":"a.test.ts","ms":5,"passed":true}\n', [{ file: 'a.test.ts', ms: 5, passed: true }]],
    [
      'cut short',
      '{"file":"a.test.ts","ms":5,"passed":true}\n{"file":"b.te',
      [{ file: 'a.test.ts', ms: 5, passed: true }],
    ],
    ['wrong types', '{"file":1,"ms":5,"passed":true}\n{"file":"x","ms":"5","passed":true}\n', []],
    [
      'extra fields dropped',
      '{"file":"a","ms":1,"passed":false,"x":2}',
      [{ file: 'a', ms: 1, passed: false }],
    ],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(parseFileTimes(text), want, name);
});

test('minutes: m:ss, rounded to the second, table', () => {
  const cases: [number, string][] = [
    [0, '0:00'],
    [499, '0:00'],
    [500, '0:01'],
    [61_000, '1:01'],
    [3_600_000, '60:00'],
  ];
  for (const [ms, want] of cases) assert.equal(minutes(ms), want, String(ms));
});

test('slowestLines: at most n, slowest first, failures marked, property', () => {
  const time = fc.record({
    file: fc.string({ minLength: 1, maxLength: 8 }),
    ms: fc.nat(10_000_000),
    passed: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(time, { maxLength: 30 }), fc.integer({ min: 0, max: 12 }), (times, n) => {
      const lines = slowestLines(times, n);
      assert.equal(lines.length, Math.min(n, times.length));
      const ranked = [...times].sort((a, b) => b.ms - a.ms);
      lines.forEach((line, i) => {
        assert.ok(line.includes(minutes(ranked[i]?.ms ?? 0)), `${line} holds the ${i + 1}th longest time`);
      });
      assert.equal(
        lines.filter((l) => l.endsWith(' (failed)')).length <= times.filter((t) => !t.passed).length,
        true,
      );
    }),
  );
  assert.deepEqual(
    slowestLines([
      { file: 'fast.test.ts', ms: 1_000, passed: true },
      { file: 'slow.test.ts', ms: 125_000, passed: false },
    ]),
    ['  2:05  slow.test.ts (failed)', '  0:01  fast.test.ts'],
  );
});

test('the reporter writes one record per file, with the time the runner measured', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-file-times-'));
  try {
    writeFileSync(join(dir, 'a.test.mjs'), "import { test } from 'node:test'; test('a', () => {});\n");
    writeFileSync(
      join(dir, 'b.test.mjs'),
      "import { test } from 'node:test'; test('b', () => { throw new Error('no'); });\n",
    );
    const reporter = fileURLToPath(new URL('./file-times-reporter.ts', import.meta.url));
    const out = join(dir, 'times.jsonl');
    const run = spawnSync(
      process.execPath,
      [
        '--test',
        `--test-reporter=${reporter}`,
        `--test-reporter-destination=${out}`,
        'a.test.mjs',
        'b.test.mjs',
      ],
      // Without the variable that makes a nested `node --test` report to this runner instead.
      { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
    );
    assert.equal(run.status, 1, 'b failed');
    const times = parseFileTimes(readFileSync(out, 'utf8')).sort((x, y) => x.file.localeCompare(y.file));
    assert.deepEqual(
      times.map((t) => [t.file, t.passed]),
      [
        ['a.test.mjs', true],
        ['b.test.mjs', false],
      ],
    );
    for (const t of times) assert.ok(t.ms > 0, `${t.file}: ${t.ms} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
