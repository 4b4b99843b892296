// The cost bound on tenants' PromQL (query-cost.ts), through confineQuery and boundQuery as
// the operator calls them: a table of the shapes that matter (a day at a millisecond step, every
// way to write a duration, nesting, offsets and @) and a property over generated nested
// queries, each built with the window it reads and the finest step it evaluates, so any
// query within the bounds is accepted and any beyond them refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { boundQuery, confineQuery } from './confine.ts';
import { DEFAULT_QUERY_BOUNDS, type QueryBounds } from './query-cost.ts';

const B = DEFAULT_QUERY_BOUNDS;

/** What confineQuery says of `query` under the default bounds: `ok`, or the reason and message. */
function verdict(query: string, bounds: QueryBounds = B): string {
  const got = confineQuery(query, 'a', bounds);
  return got.ok ? 'ok' : `${got.reason}: ${got.message}`;
}

test('cost bounds: table', () => {
  const ok = [
    'sum(rate(c[5m]))',
    'c[1h]',
    'c[3600]',
    'c[3599.999]',
    'c[60m]',
    'c[59m59s1000ms]',
    'max_over_time(c[1h:10s])',
    'max_over_time(rate(c[5m])[55m:10s])',
    'max_over_time(max_over_time(c[30m:10s])[30m:1m])',
    'max_over_time(c[1h:0x10])',
    // Offsets and @ move a window, they do not widen it.
    'rate(c[5m] offset 1w)',
    'rate(c[5m] offset 1w) / rate(c[5m] offset 2w)',
    'max_over_time(c[1h:10s] offset 30d)',
    'max_over_time((c offset 1y)[1h:10s])',
    'c[1h] @ 0',
    'max_over_time(rate(c[5m])[30m:10s] @ end())',
    // Duration arithmetic, worked out as Prometheus does.
    'c[30m+30m]',
    'c[2h/2]',
    'c[(5m+25m)*2]',
  ];
  for (const q of ok) assert.equal(verdict(q), 'ok', q);
  const refused: [string, RegExp][] = [
    // The costliest shape a tenant writes in a few characters: a day at a millisecond step.
    [
      'max(max_over_time(x{deployment="m"}[1d:1ms]))',
      /x\{deployment="m"\}\[1d:1ms\] reads a 24h0m0s window, wider than --max-query-range 1h0m0s/,
    ],
    ['c[1h1ms]', /c\[1h1ms\] reads a 1h0m0.001s window/],
    ['c[3600.001]', /reads a 1h0m0.001s window/],
    ['c[1d]', /c\[1d\] reads a 24h0m0s window/],
    ['c[1y]', /reads a 8760h0m0s window/],
    ['rate(c[2h])', /c\[2h\] reads a 2h0m0s window/],
    ['max_over_time(c[2h:1m])', /c\[2h:1m\] reads a 2h0m0s window/],
    ['max_over_time(c[1h:9s])', /c\[1h:9s\] evaluates every 9s, finer than --min-query-resolution 10s/],
    ['max_over_time(c[1h:9999ms])', /evaluates every 9.999s/],
    ['max_over_time(c[5m:1])', /evaluates every 1s/],
    ['max_over_time(c[5m:0s])', /evaluates every 0s/],
    ['max_over_time(c[5m:-10s])', /evaluates every -10s/],
    [
      'max_over_time(c[1h:])',
      /leaves its resolution to Prometheus' evaluation interval; .* e\.g\. \[1h:10s\]/,
    ],
    // Nested: the windows add up along the nesting.
    ['max_over_time(rate(c[5m])[1h:10s])', /c\[5m\] reads a 1h5m0s window with the subqueries around it/],
    [
      'max_over_time(max_over_time(c[30m:10s])[31m:10s])',
      /c\[30m:10s\] reads a 1h1m0s window with the subqueries/,
    ],
    ['sum(max_over_time(max_over_time(max_over_time(c[1m:1ms])[1m:1m])[1m:1m]))', /evaluates every 1ms/],
    ['c / on() group_left max_over_time(d[1h:10s] offset 1d)[5m:10s]', /reads a 1h5m0s window/],
    // A duration the operator cannot work out is refused, not guessed.
    ['c[step()]', /the range step\(\) cannot be worked out/],
    ['c[range()]', /the range range\(\) cannot be worked out/],
    ['c[Inf]', /cannot be worked out/],
    ['c[1e400]', /cannot be worked out/],
    ['max_over_time(c[5m:step()])', /the resolution step\(\) cannot be worked out/],
    // Arithmetic a literal check would miss.
    ['c[0.0000000009*1e14]', /reads a 25h0m0s window/],
    ['c[2^20]', /wider than/],
    ['c[(30m+1m)*2]', /reads a 1h2m0s window/],
  ];
  for (const [q, why] of refused) {
    const got = verdict(q);
    assert.match(got, /^QueryTooExpensive: trigger\.query costs too much: /, q);
    assert.match(got, why, q);
    assert.equal(boundQuery(q, B).ok, false, `${q}: refused unconfined too`);
  }
  // The bounds are the operator's: wider ones accept what the defaults refuse.
  assert.equal(verdict('c[1d]', { maxRangeMs: 86_400_000, minResolutionMs: 10_000 }), 'ok');
  assert.equal(verdict('max_over_time(c[5m:1s])', { maxRangeMs: 3_600_000, minResolutionMs: 1000 }), 'ok');
  // A refusal to confine comes first and keeps its own reason.
  assert.match(verdict('c{namespace="b"}[1d]'), /^QueryRefused: /);
  // Without bounds, confinement alone (as before these bounds existed).
  assert.equal(confineQuery('c[1d:1ms]', 'a').ok, true);
});

test('boundQuery: comments go, so Prometheus runs what was checked', () => {
  // Prometheus ends a comment at \r, the grammar at \n: the hidden part must not reach Prometheus.
  const q = 'max_over_time(c[1h:10s]) # \r or max_over_time(d[30d:1ms])\n';
  assert.deepEqual(boundQuery(q, B), { ok: true, query: 'max_over_time(c[1h:10s]) \n' });
  assert.equal(boundQuery('c[5m', B).ok, false);
  const refused = boundQuery('c{', B);
  assert.equal(refused.ok ? 'ok' : refused.reason, 'QueryRefused');
  // The two share a memo, never an answer: an invalid namespace is refused whatever boundQuery said.
  assert.equal(boundQuery('c', B).ok, true);
  assert.equal(confineQuery('c', '', B).ok, false);
});

/** A query in the model: its text, the widest window it reads and the finest subquery step in it. */
interface Shape {
  readonly text: string;
  readonly window: number;
  readonly step: number;
}

/** The ways Prometheus takes a duration of `ms` milliseconds (a whole number). */
function spellings(ms: number): fc.Arbitrary<string> {
  const units: [number, string][] = [
    [31_536_000_000, 'y'],
    [604_800_000, 'w'],
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
    [1, 'ms'],
  ];
  let rest = ms;
  let withUnits = '';
  for (const [size, unit] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) withUnits += `${n}${unit}`;
  }
  return fc.constantFrom(
    withUnits === '' ? '0s' : withUnits,
    `${ms}ms`,
    String(ms / 1000),
    `${ms}e-3`,
    `(${ms / 2000}*2)`,
  );
}

/** A duration near `bound`: mostly around it (both sides), sometimes far below or above. */
function near(bound: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: Math.max(0, bound - 2000), max: bound + 2000 }),
    fc.integer({ min: 0, max: bound }),
    fc.integer({ min: 0, max: bound * 3 }),
  );
}

const SELECTORS = ['c', 'c{pod="p"}', '{__name__="c"}', 'up{job=~"a|b"}'];
const OFFSETS = fc.constantFrom(
  '',
  ' offset 1w',
  ' offset -5m',
  ' @ 100',
  ' @ end()',
  ' offset 1d @ start()',
);

/** Generated queries of every nesting: selectors, range functions, subqueries, aggregations, binary operators. */
function shapes(b: QueryBounds): fc.Arbitrary<Shape> {
  const { shape } = fc.letrec<{ shape: Shape }>((tie) => ({
    shape: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...SELECTORS).map((text) => ({ text, window: 0, step: Infinity })),
      fc
        .tuple(
          fc.constantFrom(...SELECTORS),
          near(b.maxRangeMs),
          OFFSETS,
          fc.constantFrom('rate', 'max_over_time'),
        )
        .chain(([sel, range, off, fn]) =>
          spellings(range).map((r) => ({ text: `${fn}(${sel}[${r}]${off})`, window: range, step: Infinity })),
        ),
      fc
        .tuple(tie('shape'), near(b.maxRangeMs), near(b.minResolutionMs), OFFSETS)
        .chain(([inner, range, step, off]) =>
          fc.tuple(spellings(range), spellings(step)).map(([r, s]) => ({
            text: `max_over_time((${inner.text})[${r}:${s}]${off})`,
            window: inner.window + range,
            step: Math.min(inner.step, step),
          })),
        ),
      tie('shape').map((s) => ({ ...s, text: `sum by (pod) (${s.text})` })),
      fc.tuple(tie('shape'), tie('shape'), fc.constantFrom('+', ' / on(pod) ', ' or ')).map(([l, r, op]) => ({
        text: `(${l.text})${op}(${r.text})`,
        window: Math.max(l.window, r.window),
        step: Math.min(l.step, r.step),
      })),
    ),
  }));
  return shape;
}

const BOUNDS = fc.record({
  maxRangeMs: fc.constantFrom(DEFAULT_QUERY_BOUNDS.maxRangeMs, 300_000, 7_200_000, 86_400_000),
  minResolutionMs: fc.constantFrom(DEFAULT_QUERY_BOUNDS.minResolutionMs, 1000, 60_000),
});

test('cost bounds (property): a query is accepted exactly when every window it reads and every step it takes are within the bounds', () => {
  fc.assert(
    fc.property(
      BOUNDS.chain((b) => fc.tuple(fc.constant(b), shapes(b))),
      ([bounds, shape]) => {
        const within = shape.window <= bounds.maxRangeMs && shape.step >= bounds.minResolutionMs;
        for (const got of [confineQuery(shape.text, 'a', bounds), boundQuery(shape.text, bounds)]) {
          const said = got.ok ? 'accepted' : `${got.reason}: ${got.message}`;
          assert.equal(
            got.ok,
            within,
            `${shape.text} (window ${shape.window} ms, step ${shape.step} ms): ${said}`,
          );
          if (!got.ok) assert.equal(got.reason, 'QueryTooExpensive', said);
          else assert.deepEqual(confineQuery(got.query, 'a', bounds).ok, true, 'the query sent passes again');
        }
      },
    ),
    { numRuns: 600 },
  );
});
