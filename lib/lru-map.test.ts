// The LRU map against a list model: never over capacity, the least recently used out first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LruMap } from './lru-map.ts';

test('LruMap holds at most its capacity and evicts the least recently used (property, against a list model)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 9 })), { maxLength: 60 }),
      (cap, ops) => {
        const lru = new LruMap<number, number>(cap);
        let model: number[] = []; // keys, least recently used first
        for (const [isSet, k] of ops) {
          if (isSet) {
            lru.set(k, k * 10);
            model = [...model.filter((x) => x !== k), k].slice(-cap);
          } else {
            const had = model.includes(k);
            assert.equal(lru.get(k), had ? k * 10 : undefined);
            if (had) model = [...model.filter((x) => x !== k), k];
          }
          assert.ok(lru.size <= cap);
          assert.equal(lru.size, model.length);
        }
      },
    ),
  );
});
