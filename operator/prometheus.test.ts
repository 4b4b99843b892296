import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseQueryResponse, renderQuery } from './prometheus.ts';

test('renderQuery fills the target and rejects unknown placeholders', () => {
  assert.equal(
    renderQuery('x{ns="{{namespace}}",d="{{ name }}"}', { namespace: 'a', name: 'b' }),
    'x{ns="a",d="b"}',
  );
  assert.throws(
    () => renderQuery('{{pod}}', { namespace: 'a', name: 'b' }),
    /unknown placeholder \{\{pod\}\}/,
  );
});

test('parseQueryResponse classifies every answer', () => {
  const ok = (result: unknown, resultType = 'vector') => ({
    status: 'success',
    data: { resultType, result },
  });
  assert.deepEqual(parseQueryResponse(200, ok([{ metric: {}, value: [1, '0.5'] }])), {
    ok: true,
    value: 0.5,
  });
  assert.deepEqual(parseQueryResponse(200, ok([1, '2'], 'scalar')), { ok: true, value: 2 });
  assert.equal(parseQueryResponse(200, ok([])).ok, false);
  const cases: [number, unknown, string][] = [
    [200, ok([]), 'NoData'],
    [200, ok([{ value: [1, 'NaN'] }]), 'NoData'],
    [200, ok([{ value: [1, '1'] }, { value: [1, '2'] }]), 'QueryFailed'],
    [200, ok([], 'matrix'), 'QueryFailed'],
    [400, { status: 'error', errorType: 'bad_data', error: 'parse error' }, 'QueryFailed'],
    [503, { status: 'error', errorType: 'unavailable', error: 'x' }, 'MetricsUnavailable'],
    [502, undefined, 'MetricsUnavailable'],
  ];
  for (const [code, body, reason] of cases) {
    const got = parseQueryResponse(code, body);
    assert.equal(got.ok ? 'ok' : got.reason, reason, JSON.stringify(body));
  }
});
