import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from './errors.ts';
import { parseOutput, parseRequestTimeout, useColor } from './flags.ts';

void test('parseRequestTimeout reads kubectl durations in milliseconds', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['10', 10_000],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['1.5s', 1500],
  ];
  for (const [input, ms] of cases) assert.equal(parseRequestTimeout(input), ms, input);
  for (const bad of ['', 'soon', '10x', '-1s', '1s x'])
    assert.throws(() => parseRequestTimeout(bad), UsageError, bad);
});

void test('useColor: NO_COLOR always wins, auto follows the terminal', () => {
  const cases: [string, boolean, Record<string, string>, boolean][] = [
    ['auto', true, {}, true],
    ['auto', false, {}, false],
    ['always', false, {}, true],
    ['never', true, {}, false],
    ['always', true, { NO_COLOR: '1' }, false],
    ['auto', true, { NO_COLOR: '' }, true],
  ];
  for (const [mode, tty, env, want] of cases)
    assert.equal(useColor(mode, tty, env), want, `${mode} ${String(tty)} ${JSON.stringify(env)}`);
  assert.throws(() => useColor('sometimes', true, {}), UsageError);
});

void test('parseOutput accepts only the listed formats', () => {
  assert.equal(parseOutput('yaml'), 'yaml');
  assert.throws(
    () => parseOutput('wide', ['table', 'json']),
    /unsupported output format "wide": use one of table, json/,
  );
});
