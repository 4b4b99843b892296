// The cache byte budget alone: an object past the size bound is TooLarge whatever room is
// left, `admit` is asked only of an object not too large, an object that would take the cache
// or its namespace past its budget is CacheFull unless it does not grow, and the bytes held
// follow what is held and released (property test against a plain model).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CacheBudget } from './cache-budget.ts';

test('refusals come in order: TooLarge, NotAdmitted, then CacheFull of the cache or the namespace', () => {
  const budget = new CacheBudget({ maxObjectCharge: 100, maxCacheCharge: 250, maxNamespaceCharge: 150 });
  let asked = 0;
  const admit = (): string => {
    asked++;
    return 'no';
  };
  assert.equal(budget.refusal('a/x', 'a', 101, admit)?.reason, 'TooLarge');
  assert.equal(asked, 0);
  assert.deepEqual(budget.refusal('a/x', 'a', 100, admit), { reason: 'NotAdmitted', message: 'no' });
  assert.equal(asked, 1);
  assert.equal(budget.refusal('a/x', 'a', 100), undefined);
  budget.hold('a/x', 'a', 100);
  assert.match(budget.refusal('a/y', 'a', 60)?.message ?? '', /namespace a \(150 bytes of heap\)/);
  assert.equal(budget.refusal('a/y', 'a', 50), undefined);
  budget.hold('a/y', 'a', 50);
  budget.hold('b/x', 'b', 100);
  assert.match(budget.refusal('b/y', 'b', 1)?.message ?? '', /is full \(250 bytes of heap\)/);
  // An object that does not grow keeps its place in a full cache.
  assert.equal(budget.refusal('b/x', 'b', 100), undefined);
  assert.equal(budget.refusal('b/x', 'b', 90), undefined);
  budget.release('a/x', 'a');
  assert.equal(budget.bytes, 150);
  assert.equal(budget.refusal('b/y', 'b', 1), undefined);
});

test('the bytes held are the sum of what each key last held, whatever the order of holds and releases', () => {
  const op = fc.record({
    key: fc.constantFrom('a/1', 'a/2', 'b/1', 'c'),
    bytes: fc.nat({ max: 1000 }),
    release: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const budget = new CacheBudget({ maxCacheCharge: 10_000 });
      const model = new Map<string, number>();
      for (const { key, bytes, release } of ops) {
        const namespace = key.includes('/') ? (key.split('/')[0] ?? '') : '';
        if (release) {
          budget.release(key, namespace);
          model.delete(key);
        } else {
          budget.hold(key, namespace, bytes);
          model.set(key, bytes);
        }
        assert.equal(
          budget.bytes,
          [...model.values()].reduce((s, b) => s + b, 0),
        );
      }
    }),
  );
});
