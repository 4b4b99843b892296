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

/** How many comments `query` has, read with the same grammar. */
function comments(query: string): number {
  let n = 0;
  parser.parse(query).iterate({
    enter: (ref) => {
      if (ref.name === 'LineComment') n++;
      return undefined;
    },
  });
  return n;
}

test('confineQuery: table', () => {
  const ok: [string, string][] = [
    ['foo', 'foo{namespace="a"}'],
    ['foo{}', 'foo{namespace="a"}'],
    ['foo{x="1"}', 'foo{namespace="a",x="1"}'],
    ['foo{x="1",}', 'foo{namespace="a",x="1",}'],
    ['foo{namespace="a"}', 'foo{namespace="a"}'],
    ['foo{namespace=~"a"}', 'foo{namespace="a"}'],
    ['foo{"namespace"="a"}', 'foo{namespace="a"}'],
    ['{__name__=~"foo.*"}', '{namespace="a",__name__=~"foo.*"}'],
    ['{"my.metric"}', '{"my.metric",namespace="a"}'],
    ['{"my.metric", x="1"}', '{"my.metric",namespace="a", x="1"}'],
    ['sum by (pod) (rate(c{pod=~"web-.*"}[5m]))', 'sum by (pod) (rate(c{namespace="a",pod=~"web-.*"}[5m]))'],
    ['max_over_time(foo[10m:1m])', 'max_over_time(foo{namespace="a"}[10m:1m])'],
    ['foo offset 5m', 'foo{namespace="a"} offset 5m'],
    ['x / on(pod) group_left y', 'x{namespace="a"} / on(pod) group_left y{namespace="a"}'],
    ['absent(up{job="x"})', 'absent(up{namespace="a",job="x"})'],
    // Comments go, wherever they are; a `#` in a string stays.
    ['max(demo_load{deployment="web" #\n})', 'max(demo_load{namespace="a",deployment="web" \n})'],
    ['foo{x="1", # c\n}', 'foo{namespace="a",x="1", \n}'],
    ['foo{ # c\n}', 'foo{namespace="a" \n}'],
    ['{"my.metric" # c\n, x="1"}', '{"my.metric",namespace="a" \n, x="1"}'],
    ['foo # c\n{x="1"}', 'foo \n{namespace="a",x="1"}'],
    ['foo # c\noffset 5m', 'foo{namespace="a"} \noffset 5m'],
    ['foo # \r or bar', 'foo{namespace="a"} '],
    ['foo{namespace # c\n=~"a"}', 'foo{namespace="a"}'],
    ['sum by (pod # c\n) (foo) # end', 'sum by (pod \n) (foo{namespace="a"}) '],
    ['foo{x="#"} # c', 'foo{namespace="a",x="#"} '],
    ['foo{x=`#\n`}', 'foo{namespace="a",x=`#\n`}'],
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
const value = fc.constantFrom('a', 'b', 'web-.*', '', '.+', 'a|b', '#', '}#{');
const op = fc.constantFrom('=', '!=', '=~', '!~');
/** Whitespace where the grammar allows it: nothing, blanks, or a comment that could swallow what follows. */
const gap = fc.constantFrom('', ' ', '\n', ' # c\n', '#,namespace="b"}\n', '#\r or b\n');
const matcher = fc.tuple(label, op, value).map(([l, o, v]) => `${l}${o}"${v}"`);
const selector = fc
  .tuple(
    fc.constantFrom('up', 'http_requests_total', ''),
    fc.array(fc.tuple(matcher, gap), { maxLength: 3 }),
    fc.boolean(),
    gap,
  )
  .map(([name, ms, braces, g]) =>
    name === '' || braces || ms.length > 0
      ? `${name}${g}{${g}${ms.map(([m, after]) => `${m}${after}`).join(',')}}`
      : name,
  )
  .filter((s) => !/^\{[^"]*\}$/.test(s));
const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    selector,
    fc.constant('1'),
    fc.tuple(tie('e'), gap).map(([e, g]) => `sum by (pod${g}) (${e})${g}`),
    fc.tuple(selector, gap).map(([s, g]) => `rate(${s}${g}[5m])`),
    tie('e').map((e) => `max_over_time((${e})[10m:1m])`),
    fc
      .tuple(tie('e'), fc.constantFrom('+', '/', 'and', 'or', 'unless'), gap, tie('e'))
      .map(([a, o, g, b]) => `(${a}) ${o}${g} (${b})`),
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
      assert.equal(comments(got.query), 0, `comments removed: ${got.query}`);
      assert.deepEqual(confineQuery(got.query, 'a'), got, 'idempotent');
    }),
    { numRuns: 500 },
  );
});

test('confineQuery: the memo answers as a fresh parse would, also once it is full', () => {
  const query = 'rate(http_requests_total{job="a"}[5m]) # a comment';
  const first = confineQuery(query, 'ns-a');
  assert.deepEqual(first, { ok: true, query: 'rate(http_requests_total{namespace="ns-a",job="a"}[5m]) ' });
  assert.deepEqual(confineQuery(query, 'ns-b'), {
    ok: true,
    query: 'rate(http_requests_total{namespace="ns-b",job="a"}[5m]) ',
  });
  for (let i = 0; i < 1500; i++) confineQuery(`up{i="${i}"}`, 'ns-c');
  assert.deepEqual(confineQuery(query, 'ns-a'), first);
  assert.deepEqual(confineQuery('up{i="7"}', 'ns-c'), { ok: true, query: 'up{namespace="ns-c",i="7"}' });
  assert.equal(confineQuery('up{', 'ns-a').ok, false);
  assert.equal(confineQuery('up{', 'ns-a').ok, false, 'a refusal is remembered as a refusal');
});
