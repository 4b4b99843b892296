import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, formatLine } from './log.ts';

const at = new Date('2026-12-02T08:00:00.123Z');

test('json lines carry zap production keys: ts, level, logger, msg, then fields; stacktrace on errors', () => {
  const line = formatLine('json', at, 'info', 'operator', 'reconciled', { key: 'ns/a', n: 2 });
  assert.equal(
    line,
    '{"ts":"2026-12-02T08:00:00.123Z","level":"info","logger":"operator","msg":"reconciled","key":"ns/a","n":2}\n',
  );
  const err = new Error('boom');
  const failed = JSON.parse(formatLine('json', at, 'error', 'operator', 'failed', { err })) as Record<
    string,
    unknown
  >;
  assert.equal(failed['err'], 'boom');
  assert.match(String(failed['stacktrace']), /^Error: boom\n\s+at /);
  const warned = JSON.parse(formatLine('json', at, 'warn', 'operator', 'w', { err })) as Record<
    string,
    unknown
  >;
  assert.equal(warned['stacktrace'], undefined, 'a stack only on error lines, as zap');
  const clash = JSON.parse(
    formatLine('json', at, 'info', 'operator', 'real', { msg: 'forged', level: 'error' }),
  ) as Record<string, unknown>;
  assert.deepEqual(
    [clash['msg'], clash['level']],
    ['real', 'info'],
    'a field never replaces a key of the line',
  );
});

test('console lines read as zap development ones', () => {
  assert.equal(
    formatLine('console', at, 'warn', 'operator', 'slow', { key: 'ns/a' }),
    '2026-12-02T08:00:00.123Z\tWARN\toperator\tslow\t{"key":"ns/a"}\n',
  );
  assert.equal(
    formatLine('console', at, 'info', 'operator', 'up', {}),
    '2026-12-02T08:00:00.123Z\tINFO\toperator\tup\n',
  );
});

test('with({component}) names a child logger as zap Named does; other fields ride along; the level filters', () => {
  const lines: string[] = [];
  const log = createLogger('operator', { level: 'info', write: (l) => lines.push(l) });
  const child = log.with({ component: 'conversion-webhook', pod: 'p1' });
  child.info('served');
  child.debug('hidden');
  assert.equal(lines.length, 1, 'the debug line is filtered out');
  const only = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
  assert.equal(only['logger'], 'operator.conversion-webhook');
  assert.equal(only['pod'], 'p1');
  assert.equal(only['component'], undefined);
});
