import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from './errors.ts';
import { connectionOverrides, parseOutput, parseRequestTimeout, resourceName, useColor } from './flags.ts';

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

void test('parseOutput: the plain formats, name only where AITasks are listed, jsonpath templates', () => {
  const cases: [string, string | undefined, string][] = [
    ['yaml', undefined, 'yaml'],
    ['=json', 'version', 'json'],
    ['wide', 'describe', 'wide'],
    ['name', 'describe', 'name'],
    ['name', 'explain-phase', 'name'],
    ['jsonpath={.phase}', 'describe', 'jsonpath'],
    ['jsonpath-as-json={.phase}', 'version', 'jsonpath'],
    ['jsonpath=plain text', 'version', 'jsonpath'],
  ];
  for (const [value, command, format] of cases)
    assert.equal(parseOutput(value, command).format, format, `${value} ${command ?? ''}`);
  const asJson = parseOutput('jsonpath-as-json={.a}');
  assert.ok(asJson.format === 'jsonpath' && asJson.asJson && asJson.template.source === '{.a}');
  const refused: [string, string | undefined, RegExp][] = [
    [
      'xml',
      'describe',
      /unsupported output format "xml": use one of table, wide, json, yaml, name, jsonpath=TEMPLATE/,
    ],
    [
      'name',
      'version',
      /unsupported output format "name" for version: use one of table, wide, json, yaml, jsonpath=/,
    ],
    ['name', 'generation-diff', /for generation-diff/],
    ['jsonpath', 'describe', /template format specified but no template given/],
    ['jsonpath=', 'describe', /no template given/],
    ['jsonpath={.a[}', 'describe', /^error parsing jsonpath \{\.a\[\}: unterminated array$/],
    ['jsonpath={range .items[*]}', 'describe', /error parsing jsonpath .*without \{end\}/],
    ['custom-columns=NAME:.name', 'describe', /unsupported output format/],
  ];
  for (const [value, command, message] of refused)
    assert.throws(
      () => parseOutput(value, command),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
      value,
    );
});

void test('resourceName is the form kubectl get -o name prints: resource.group/name', () => {
  assert.equal(resourceName('web-cpu'), 'aitask.aiops.example.com/web-cpu');
});

void test('connectionOverrides: given flags only, kubectl-refused combinations are usage errors', () => {
  const base = { output: 'table', requestTimeout: '30s', color: 'auto' };
  assert.deepEqual(connectionOverrides(base), {});
  assert.deepEqual(
    connectionOverrides({
      ...base,
      server: 'https://api:6443',
      token: 't',
      as: 'jane',
      asGroup: ['a', 'b'],
      asUid: '7',
      insecureSkipTlsVerify: true,
      user: 'u',
      cluster: 'c',
    }),
    {
      server: 'https://api:6443',
      token: 't',
      as: 'jane',
      asGroups: ['a', 'b'],
      asUid: '7',
      insecureSkipTlsVerify: true,
      user: 'u',
      cluster: 'c',
    },
  );
  assert.deepEqual(connectionOverrides({ ...base, server: '10.0.0.1:6443', asGroup: [] }), {
    server: '10.0.0.1:6443',
  });
  assert.throws(
    () => connectionOverrides({ ...base, insecureSkipTlsVerify: true, certificateAuthority: '/ca' }),
    /root certificates file with the insecure flag is not allowed/,
  );
  for (const server of ['ftp://x', 'https://', 'http://a b'])
    assert.throws(() => connectionOverrides({ ...base, server }), UsageError, server);
});
