// The steady bench's reading of /metrics text: histogram buckets summed over series, their
// difference over a window, and quantiles as PromQL's histogram_quantile computes them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bucketDelta, histogram, observations, quantile, sumSeries } from './steady-probe.ts';

const TEXT = `# TYPE h histogram
h_bucket{controller="a",le="0.1"} 2
h_bucket{controller="a",le="1"} 6
h_bucket{controller="a",le="+Inf"} 8
h_bucket{controller="b",le="0.1"} 2
h_bucket{controller="b",le="1"} 2
h_bucket{controller="b",le="+Inf"} 2
h_sum{controller="a"} 9
h_count{controller="a"} 8
c_total{handler="/api/v1/query",code="200"} 5
c_total{handler="/api/v1/query",code="400"} 1
c_total{handler="/metrics",code="200"} 7
`;

test('buckets add up over series; quantiles interpolate within a bucket as histogram_quantile does', () => {
  const b = histogram(TEXT, 'h');
  assert.deepEqual(
    [...b],
    [
      [0.1, 4],
      [1, 8],
      [Number.POSITIVE_INFINITY, 10],
    ],
  );
  assert.equal(observations(b), 10);
  assert.equal(quantile(b, 0.2), 0.05);
  assert.equal(quantile(b, 0.6), 0.1 + 0.9 * 0.5);
  assert.equal(quantile(b, 0.99), 1, 'the +Inf bucket answers the highest finite bound');
  assert.ok(Number.isNaN(quantile(new Map(), 0.5)));
  assert.equal(
    sumSeries(TEXT, 'c_total', (l) => l.includes('handler="/api/v1/query"')),
    6,
  );
});

test('a window holds what was observed in it: quantiles of the delta stay within its buckets', () => {
  const bounds = [0.01, 0.1, 1, 10, Number.POSITIVE_INFINITY];
  fc.assert(
    fc.property(
      fc.array(fc.nat(50), { minLength: 5, maxLength: 5 }),
      fc.array(fc.nat(50), { minLength: 5, maxLength: 5 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (first, second, q) => {
        const cumulative = (xs: number[]): Map<number, number> => {
          let run = 0;
          return new Map(bounds.map((le, i) => [le, (run += xs[i] ?? 0)]));
        };
        const before = cumulative(first);
        const after = cumulative(first.map((x, i) => x + (second[i] ?? 0)));
        const delta = bucketDelta(before, after);
        assert.deepEqual([...delta], [...cumulative(second)]);
        const v = quantile(delta, q);
        if (observations(delta) === 0) assert.ok(Number.isNaN(v));
        else assert.ok(v >= 0 && v <= 10, `quantile ${v}`);
      },
    ),
  );
});
