// The per-address token buckets (token-bucket.ts): the burst then the rate for one address,
// addresses paced apart, the bounded map that only drops refilled buckets, and the overflow
// bucket new addresses share when every kept one is draining; property-checked against the
// token-bucket bound.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AddressPacer, refill, reserve, type Bucket } from './token-bucket.ts';

const LIMITS = { ratePerSecond: 4, burst: 8, addresses: 2 };

/** How many of `n` takes by `address` at `now` went through. */
function takes(p: AddressPacer, address: string, now: number, n: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++) if (p.take(address, now)) ok++;
  return ok;
}

test('AddressPacer: burst, rate, separate addresses, bounded map with an overflow bucket, table', () => {
  const cases: [string, (p: AddressPacer) => void][] = [
    ['a new address gets the burst at once', (p) => assert.equal(takes(p, 'a', 0, 20), 8)],
    [
      'then the rate: 4 a second, never more than the burst after a quiet spell',
      (p) => {
        takes(p, 'a', 0, 20);
        assert.equal(takes(p, 'a', 250, 5), 1);
        assert.equal(takes(p, 'a', 1250, 10), 4);
        assert.equal(takes(p, 'a', 60_000, 20), 8);
      },
    ],
    [
      'another address keeps its own pace',
      (p) => {
        takes(p, 'a', 0, 20);
        assert.equal(takes(p, 'b', 0, 20), 8);
      },
    ],
    [
      'map full of draining buckets: a new address shares the overflow bucket with the next',
      (p) => {
        takes(p, 'a', 0, 20);
        takes(p, 'b', 0, 20);
        assert.equal(takes(p, 'c', 0, 5), 5);
        assert.equal(takes(p, 'd', 0, 20), 3, 'c and d share one burst');
        assert.equal(p.size, 2);
      },
    ],
    [
      'the least recently touched bucket, once refilled, makes room for a new address',
      (p) => {
        takes(p, 'a', 0, 20);
        takes(p, 'b', 1000, 20);
        assert.equal(takes(p, 'c', 2000, 20), 8, 'a refilled by 2 s: dropped, c gets its own');
        assert.equal(p.size, 2);
        assert.equal(takes(p, 'b', 2000, 20), 4, 'b kept its own, half refilled');
      },
    ],
  ];
  for (const [name, run] of cases) {
    try {
      run(new AddressPacer(LIMITS));
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`, { cause: err });
    }
  }
});

test('AddressPacer (property): within any run each address gets at most burst + rate x time, and all of them at most (addresses seen + 1) times that; at most `addresses` buckets', () => {
  const op = fc.record({
    address: fc.integer({ min: 0, max: 5 }),
    advanceMs: fc.integer({ min: 0, max: 700 }),
  });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 1, max: 8 }), (ops, addresses) => {
      const limits = { ratePerSecond: 3, burst: 5, addresses };
      const p = new AddressPacer(limits);
      const granted = new Map<number, number>();
      let now = 0;
      for (const o of ops) {
        now += o.advanceMs;
        if (p.take(`10.0.0.${o.address}`, now)) granted.set(o.address, (granted.get(o.address) ?? 0) + 1);
        assert.ok(p.size <= addresses);
      }
      const bound = limits.burst + (limits.ratePerSecond * now) / 1000;
      const total = [...granted.values()].reduce((a, b) => a + b, 0);
      assert.ok(total <= (granted.size + 1) * bound, `${total} in ${now} ms`);
      if (new Set(ops.map((o) => o.address)).size <= addresses)
        for (const [address, n] of granted) assert.ok(n <= bound, `${address}: ${n} in ${now} ms`);
    }),
  );
});

test('AddressPacer: a cost of several tokens, and a charge into debt paid back at the rate', () => {
  const p = new AddressPacer(LIMITS);
  assert.equal(p.take('a', 0, 5), true);
  assert.equal(p.take('a', 0, 5), false, '3 left');
  p.charge('a', 0, 11);
  assert.equal(p.balance('a', 0), -8);
  assert.equal(p.balance('a', 1000), -4, 'paid back at 4 a second');
  assert.equal(p.take('a', 1000), false);
  assert.equal(p.balance('a', 3000), 4);
  assert.equal(p.balance('b', 3000), 8, 'another address is not charged');
  assert.equal(p.balance('a', 60_000), 8, 'never above the burst');
});

test('reserve (property): from a full bucket, the k-th reservation at one instant waits for its token, and waits shrink with time', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 0, max: 10_000 }),
      (ratePerSecond, burst, n, later) => {
        const pace = { ratePerSecond, burst };
        const b: Bucket = { tokens: burst, at: 0 };
        for (let k = 0; k < n; k++) {
          const want = (Math.max(0, k + 1 - burst) / ratePerSecond) * 1000;
          assert.ok(Math.abs(reserve(b, pace, 0) - want) < 1e-6, `reservation ${k}`);
        }
        refill(b, pace, later);
        assert.ok(b.tokens <= burst, 'never more than the burst');
        assert.equal(b.tokens, Math.min(burst, burst - n + (later * ratePerSecond) / 1000));
        refill(b, pace, later - 1);
        assert.equal(b.at, later, 'a clock that steps back adds nothing');
      },
    ),
  );
});
