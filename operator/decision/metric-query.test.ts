import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { DEFAULT_QUERY_TEMPLATE, metricQuery, renderQuery } from './metric-query.ts';

const rules = { defaultQuery: DEFAULT_QUERY_TEMPLATE, confineQueries: true };

function task(query?: string): Pick<v2.AITask, 'spec'> {
  return {
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1, ...(query !== undefined ? { query } : {}) },
      remediation: { action: 'Noop' },
    },
  };
}

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

test('{{pods}} matches the pod names of the target kind: NAME-hash-random or NAME-ordinal', () => {
  const pods = (kind?: v2.TargetKind) =>
    new RegExp(`^${renderQuery('{{pods}}', { namespace: 'a', name: 'db', ...(kind ? { kind } : {}) })}$`);
  for (const [kind, yes, no] of [
    [undefined, 'db-7d9f8c6b5-x2k4q', 'db-0'],
    ['Deployment', 'db-7d9f8c6b5-x2k4q', 'db-0'],
    ['StatefulSet', 'db-12', 'db-7d9f8c6b5-x2k4q'],
  ] as const) {
    assert.match(yes, pods(kind), `${kind ?? 'default'} matches ${yes}`);
    assert.doesNotMatch(no, pods(kind), `${kind ?? 'default'} does not match ${no}`);
  }
  assert.doesNotMatch('dbx-0', pods('StatefulSet'), 'another target whose name starts alike');
});

test('metricQuery: the default template for the target; a bad template is QueryFailed', async () => {
  assert.deepEqual(
    await metricQuery(task(), 'shop', {
      ...rules,
      defaultQuery: 'up{namespace="{{namespace}}",d="{{name}}"}',
    }),
    {
      ok: true,
      query: 'up{namespace="shop",d="web"}',
    },
  );
  const bad = await metricQuery(task(), 'shop', { ...rules, defaultQuery: '{{pod}}' });
  assert.equal(bad.ok ? 'sent' : bad.reason, 'QueryFailed');
});

test("metricQuery: the task's query confined to the target's namespace, refused where it cannot be, costed", async () => {
  const confined = await metricQuery(task('sum(load)'), 'shop', rules);
  assert.ok(confined.ok);
  assert.match(confined.query, /namespace="shop"/);
  const refused = await metricQuery(task('sum(load{namespace="other"})'), 'shop', rules);
  assert.equal(refused.ok ? 'sent' : refused.reason, 'QueryRefused');
  const costly = await metricQuery(task('sum(rate(load[30d]))'), 'shop', rules);
  assert.equal(costly.ok ? 'sent' : costly.reason, 'QueryTooExpensive');
  const unconfined = await metricQuery(task('sum(load{namespace="other"})'), 'shop', {
    ...rules,
    confineQueries: false,
  });
  assert.deepEqual(unconfined, { ok: true, query: 'sum(load{namespace="other"})' });
});
