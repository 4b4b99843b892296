import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mapWithLimits, someNames } from './bounded-concurrency.ts';

test('mapWithLimits (property): never more than `concurrency` calls in flight; every item done, in order', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.nat(3), { maxLength: 40 }),
      fc.integer({ min: 1, max: 8 }),
      async (delays, concurrency) => {
        let inFlight = 0;
        let most = 0;
        const out = await mapWithLimits(delays, { concurrency, deadlineMs: Infinity }, async (d) => {
          inFlight++;
          most = Math.max(most, inFlight);
          for (let i = 0; i < d; i++) await Promise.resolve();
          inFlight--;
          return d * 2;
        });
        assert.ok(most <= concurrency);
        assert.deepEqual(
          out.done.map((r) => r.result),
          delays.map((d) => d * 2),
        );
        assert.deepEqual(out.left, []);
      },
    ),
  );
});

test('mapWithLimits: no call starts after the deadline; the rest is returned as left', async () => {
  let clock = 0;
  const calls: number[] = [];
  const out = await mapWithLimits(
    [1, 2, 3, 4, 5, 6],
    { concurrency: 2, deadlineMs: 25, now: () => clock },
    (n) => {
      calls.push(n);
      clock += 10;
      return Promise.resolve(n);
    },
  );
  assert.deepEqual(calls, [1, 2, 3]);
  assert.deepEqual(
    out.done.map((r) => r.item),
    [1, 2, 3],
  );
  assert.deepEqual(out.left, [4, 5, 6]);
});

test('mapWithLimits: a failing call rejects the run and starts nothing more', async () => {
  const calls: number[] = [];
  await assert.rejects(
    mapWithLimits([1, 2, 3, 4], { concurrency: 1, deadlineMs: Infinity }, (n) => {
      calls.push(n);
      return n === 2 ? Promise.reject(new Error('boom')) : Promise.resolve(n);
    }),
    /boom/,
  );
  assert.deepEqual(calls, [1, 2]);
});

test('someNames: the first names and an exact count of the rest', () => {
  assert.equal(someNames([], 3), '');
  assert.equal(someNames(['a', 'b'], 3), 'a, b');
  assert.equal(someNames(['a', 'b', 'c', 'd', 'e'], 3), 'a, b, c and 2 more');
  assert.equal(someNames(['a', 'b'], 0), '2 more');
});
