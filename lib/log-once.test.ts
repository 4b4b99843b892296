// LogOnce: one line per (object, reason) per interval, a count of what it held back, and a
// table that never grows past its bound whatever keys arrive.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LogOnce } from './log-once.ts';

test('a repeated key is logged once per interval, the next line counting what was held back', () => {
  const once = new LogOnce(1000, 10);
  assert.deepEqual(once.check('demo/a', 'conversion', 0), { log: true, suppressed: 0 });
  assert.deepEqual(once.check('demo/a', 'conversion', 10), { log: false });
  assert.deepEqual(once.check('demo/a', 'conversion', 999), { log: false });
  assert.deepEqual(once.check('demo/b', 'conversion', 999), { log: true, suppressed: 0 }, 'another object');
  assert.deepEqual(once.check('demo/a', 'malformed', 999), { log: true, suppressed: 0 }, 'another reason');
  assert.deepEqual(once.check('demo/a', 'conversion', 1000), { log: true, suppressed: 2 });
  assert.deepEqual(once.check('demo/a', 'conversion', 1001), { log: false });
});

test('past maxKeys new keys share one overflow key per reason; a whole interval later they are forgotten', () => {
  const once = new LogOnce(1000, 3);
  for (const o of ['a', 'b', 'c']) assert.equal(once.check(o, 'r', 0).log, true);
  assert.equal(once.check('d', 'r', 1).log, true, 'the first overflowing key is logged');
  assert.equal(once.check('e', 'r', 2).log, false, 'the next shares its line');
  assert.equal(once.check('f', 's', 2).log, true, 'another reason has its own overflow line');
  assert.equal(once.size, 5);
  assert.deepEqual(
    once.check('g', 'r', 1000),
    { log: true, suppressed: 0 },
    'old keys swept: g has a line of its own',
  );
});

test('whatever keys arrive, the table holds at most maxKeys plus one overflow key per reason', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom('a', 'b', 'c'), fc.nat(5000)), {
        maxLength: 400,
      }),
      (events) => {
        const once = new LogOnce(1000, 16);
        let now = 0;
        for (const [object, reason, dt] of events) {
          now += dt;
          once.check(object, reason, now);
          assert.ok(once.size <= 16 + 3, `size ${once.size}`);
        }
      },
    ),
  );
});
