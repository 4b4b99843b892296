// The caches' memory ledger adds up at the shipped memory limit (inventory-ledger.ts): every
// cache's namespace share holds the promised number of objects at the object bound, the
// shares fit the ledger, and the ledger with a page in flight and the process fits the heap;
// and raising a bound or a share past what fits is caught.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_OBJECT_CHARGE, MIN_WORST_OBJECTS_PER_NAMESPACE } from '../../operator/runtime/memory-ledger.ts';
import { TARGET_KINDS } from '../../operator/runtime/target-kinds.ts';
import {
  LEDGER_LINES,
  ledgerAt,
  ledgerMisfits,
  SHIPPED,
  SHIPPED_HEAP_LIMIT_BYTES,
  type LedgerInputs,
} from './inventory-ledger.ts';

test('every cache is a line of the ledger', () => {
  assert.deepEqual(
    LEDGER_LINES.map((l) => l.resource).sort(),
    ['aitasks', ...Object.values(TARGET_KINDS).map((r) => r.resource.plural)].sort(),
  );
});

test('at the shipped limit, worst object × objects promised ≤ namespace share ≤ cache share, Σ shares ≤ ledger, ledger + the rest ≤ heap', () => {
  assert.deepEqual(ledgerMisfits(), []);
  const { ledger, lines } = ledgerAt();
  for (const l of lines) {
    assert.ok(MAX_OBJECT_CHARGE * MIN_WORST_OBJECTS_PER_NAMESPACE <= l.maxNamespaceCharge, l.resource);
    assert.ok(l.maxNamespaceCharge <= l.maxCacheCharge, l.resource);
  }
  assert.ok(lines.reduce((n, l) => n + l.maxCacheCharge, 0) <= ledger);
});

test('a share, the object bound or the ledger raised past what fits is a misfit', () => {
  const raised = (resource: string, share: { cache: number; namespace: number }): LedgerInputs => ({
    ...SHIPPED,
    lines: SHIPPED.lines.map((l) => (l.resource === resource ? { resource, share } : l)),
  });
  assert.match(
    ledgerMisfits(raised('aitasks', { cache: 3 / 4, namespace: 1 / 8 })).join('\n'),
    /shares add up/,
  );
  assert.match(
    ledgerMisfits(raised('deployments', { cache: 1 / 4, namespace: 2 })).join('\n'),
    /deployments: a namespace's share is more than the cache's/,
  );
  assert.match(
    ledgerMisfits({ ...SHIPPED, maxObjectCharge: 2 * MAX_OBJECT_CHARGE }).join('\n'),
    /statefulsets: 16 objects of 131072 bytes do not fit/,
  );
  assert.match(
    ledgerMisfits(raised('statefulsets', { cache: 1 / 8, namespace: 1 / 16 })).join('\n'),
    /statefulsets: 16 objects/,
  );
  assert.match(
    ledgerMisfits({ ...SHIPPED, heapLimitBytes: SHIPPED_HEAP_LIMIT_BYTES / 2 }).join('\n'),
    /pass the heap limit/,
  );
});
