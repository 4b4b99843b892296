import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parser } from '@prometheus-io/lezer-promql';
import { confineQuery } from './confine.ts';

/** Every vector selector of `query` with its matchers' text, read with the same grammar. */
function selectors(query: string): { text: string; matchers: string[] }[] {
  const out: { text: string; matchers: string[] }[] = [];
  parser.parse(query).iterate({
    enter: (ref) => {
      assert.ok(!ref.type.isError, `valid PromQL: ${query}`);
      if (ref.name !== 'VectorSelector') return undefined;
      const matchers: string[] = [];
      const list = ref.node.getChild('LabelMatchers');
      for (let m = list?.firstChild; m; m = m.nextSibling)
        if (m.name.endsWith('LabelMatcher')) matchers.push(query.slice(m.from, m.to));
      out.push({ text: query.slice(ref.from, ref.to), matchers });
      return undefined;
    },
  });
  return out;
}

test('confineQuery: table', () => {
  const ok: [string, string][] = [
    ['foo', 'foo{namespace="a"}'],
    ['foo{}', 'foo{namespace="a"}'],
    ['foo{x="1"}', 'foo{x="1",namespace="a"}'],
    ['foo{x="1",}', 'foo{x="1",namespace="a",}'],
    ['foo{namespace="a"}', 'foo{namespace="a"}'],
    ['foo{namespace=~"a"}', 'foo{namespace="a"}'],
    ['foo{"namespace"="a"}', 'foo{namespace="a"}'],
    ['{__name__=~"foo.*"}', '{__name__=~"foo.*",namespace="a"}'],
    ['{"my.metric"}', '{"my.metric",namespace="a"}'],
    ['{"my.metric", x="1"}', '{"my.metric", x="1",namespace="a"}'],
    ['sum by (pod) (rate(c{pod=~"web-.*"}[5m]))', 'sum by (pod) (rate(c{pod=~"web-.*",namespace="a"}[5m]))'],
    ['max_over_time(foo[10m:1m])', 'max_over_time(foo{namespace="a"}[10m:1m])'],
    ['foo offset 5m', 'foo{namespace="a"} offset 5m'],
    ['x / on(pod) group_left y', 'x{namespace="a"} / on(pod) group_left y{namespace="a"}'],
    ['absent(up{job="x"})', 'absent(up{job="x",namespace="a"})'],
    ['vector(1)', 'vector(1)'],
    ['0.5', '0.5'],
  ];
  for (const [query, want] of ok)
    assert.deepEqual(confineQuery(query, 'a'), { ok: true, query: want }, query);
  const refused: [string, RegExp][] = [
    ['foo{namespace="b"}', /namespace="b" selects another namespace than a/],
    ['foo{namespace=~"a|b"}', /could select other namespaces/],
    ['foo{namespace=~".+"}', /could select other namespaces/],
    ['foo{namespace!="b"}', /could select other namespaces/],
    ['foo{namespace!~"b"}', /could select other namespaces/],
    ['foo{namespace=""}', /selects another namespace/],
    ['foo / bar{namespace="b"}', /bar\{namespace="b"\}/],
    ['sum(rate(c{"namespace"="b"}[1m]))', /selects another namespace/],
    ['foo{namespace="\\x61"}', /could select|selects another/],
    ['foo{"name\\x73pace"="b"}', /escapes cannot be checked/],
    ['info(foo)', /info\(\) reads target_info/],
    ['foo{', /not valid PromQL/],
    ['sum(', /not valid PromQL/],
  ];
  for (const [query, why] of refused) {
    const got = confineQuery(query, 'a');
    assert.ok(!got.ok, query);
    assert.match(got.message, why, query);
  }
  assert.equal(confineQuery('foo', 'A"}').ok, false, 'the namespace is a DNS label');
});

const label = fc.constantFrom('job', 'pod', 'namespace', '__name__', 'le');
const value = fc.constantFrom('a', 'b', 'web-.*', '', '.+', 'a|b');
const op = fc.constantFrom('=', '!=', '=~', '!~');
const matcher = fc.tuple(label, op, value).map(([l, o, v]) => `${l}${o}"${v}"`);
const selector = fc
  .tuple(fc.constantFrom('up', 'http_requests_total', ''), fc.array(matcher, { maxLength: 3 }), fc.boolean())
  .map(([name, ms, braces]) => (name === '' || braces || ms.length > 0 ? `${name}{${ms.join(',')}}` : name))
  .filter((s) => s !== '{}');
const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    selector,
    fc.constant('1'),
    tie('e').map((e) => `sum by (pod) (${e})`),
    selector.map((s) => `rate(${s}[5m])`),
    tie('e').map((e) => `max_over_time((${e})[10m:1m])`),
    fc
      .tuple(tie('e'), fc.constantFrom('+', '/', 'and', 'or', 'unless'), tie('e'))
      .map(([a, o, b]) => `(${a}) ${o} (${b})`),
  ),
})).e;

test('confineQuery (property): a confined query is valid, every selector reads only the namespace, the other matchers are kept', () => {
  fc.assert(
    fc.property(expr, (query) => {
      const got = confineQuery(query, 'a');
      const before = selectors(query);
      const foreign = before.some((s) =>
        s.matchers.some((m) => m.startsWith('namespace') && m !== 'namespace="a"' && m !== 'namespace=~"a"'),
      );
      if (!got.ok) {
        assert.ok(foreign, `refused only for a foreign namespace matcher: ${query} (${got.message})`);
        return;
      }
      assert.ok(!foreign, `a foreign namespace matcher was let through: ${query}`);
      const after = selectors(got.query);
      assert.equal(after.length, before.length);
      for (const [i, s] of after.entries()) {
        const ns = s.matchers.filter((m) => m.startsWith('namespace'));
        assert.ok(ns.length > 0 && ns.every((m) => m === 'namespace="a"'), `${s.text} in ${got.query}`);
        const kept = (list: string[]) => list.filter((m) => !m.startsWith('namespace'));
        assert.deepEqual(kept(s.matchers), kept(before[i]?.matchers ?? []));
      }
      assert.deepEqual(confineQuery(got.query, 'a'), got, 'idempotent');
    }),
    { numRuns: 500 },
  );
});
