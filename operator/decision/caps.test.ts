import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type * as v2 from '../../api/schema/v2.ts';
import { cordonAllowed, RemediationSlots, targetOwner } from './caps.ts';

test('remediation slots: capped, kept by the holder, freed when the status leaves Healing', () => {
  const cached = new Map<string, v2.Status>([
    ['ns/old', { phase: 'Healing' }],
    ['ns/idle', { phase: 'Monitoring' }],
  ]);
  const slots = new RemediationSlots(2, () => cached.entries());
  assert.deepEqual(slots.holders(), ['ns/old'], 'seeded from cached statuses');
  assert.equal(slots.acquire('ns/a'), undefined);
  assert.deepEqual(slots.acquire('ns/b'), ['ns/a', 'ns/old']);
  assert.equal(slots.acquire('ns/a'), undefined, 'a holder keeps its slot');
  assert.equal(slots.sync('ns/old', { phase: 'Healed' }), false, 'not held by this process before');
  assert.equal(slots.acquire('ns/b'), undefined, 'known statuses win over the cache');
  assert.deepEqual(slots.acquire('ns/c'), ['ns/a', 'ns/b']);
  assert.equal(slots.sync('ns/a', { phase: 'Failed' }), true);
  assert.equal(slots.acquire('ns/c'), undefined);
  assert.equal(slots.forget('ns/c'), true);
  assert.equal(new RemediationSlots(0, () => []).acquire('x'), undefined, '0 means no cap');
});

test('remediation slots (property): holders never exceed the cap', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.tuple(fc.constantFrom('acquire', 'heal', 'forget'), fc.integer({ min: 0, max: 9 })), {
        maxLength: 100,
      }),
      (cap, ops) => {
        const slots = new RemediationSlots(cap, () => []);
        for (const [op, i] of ops) {
          const key = `ns/t${i}`;
          if (op === 'acquire') {
            if (slots.acquire(key) === undefined) slots.sync(key, { phase: 'Healing' });
          } else if (op === 'heal') slots.sync(key, { phase: 'Healed' });
          else slots.forget(key);
          assert.ok(slots.holders().length <= cap);
        }
      },
    ),
  );
});

test('cordon cap: table', () => {
  const nodes = (n: number, cordoned: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `n${i}`, unschedulable: i < cordoned }));
  assert.deepEqual(cordonAllowed(nodes(3, 0), 'n2', 34), { ok: true });
  assert.equal(cordonAllowed(nodes(3, 1), 'n2', 34).ok, false);
  assert.equal(cordonAllowed(nodes(2, 0), 'n1', 34).ok, false, '1 of 2 is 50%');
  assert.equal(cordonAllowed(nodes(2, 0), 'n1', 50).ok, true);
  const already = cordonAllowed(nodes(3, 1), 'n0', 100);
  assert.equal(!already.ok && already.reason, 'NodeAlreadyCordoned');
  const capped = cordonAllowed(nodes(10, 3), 'n9', 30);
  assert.equal(!capped.ok && capped.reason, 'CordonCapReached');
  assert.equal(cordonAllowed(nodes(1, 0), 'n0', 0).ok, false);
});

test('cordon cap (property): an allowed cordon never exceeds the share', () => {
  fc.assert(
    fc.property(
      fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
      fc.integer({ min: 0, max: 100 }),
      fc.nat(),
      (flags, pct, pick) => {
        const nodes = flags.map((u, i) => ({ name: `n${i}`, unschedulable: u }));
        const node = `n${pick % nodes.length}`;
        if (cordonAllowed(nodes, node, pct).ok) {
          const after = nodes.filter((n) => n.unschedulable || n.name === node).length;
          assert.ok(after * 100 <= pct * nodes.length);
        }
      },
    ),
  );
});

test('targetOwner: the oldest live AITask, then by key', () => {
  const t = (name: string, created: string, deleting = false) => ({
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: created,
      ...(deleting ? { deletionTimestamp: created } : {}),
    },
  });
  assert.equal(targetOwner([t('b', '2026-01-01T00:00:01Z'), t('a', '2026-01-01T00:00:02Z')]), 'ns/b');
  assert.equal(targetOwner([t('b', '2026-01-01T00:00:01Z'), t('a', '2026-01-01T00:00:01Z')]), 'ns/a');
  assert.equal(targetOwner([t('b', '2026-01-01T00:00:01Z', true), t('a', '2026-01-01T00:00:02Z')]), 'ns/a');
  assert.equal(targetOwner([]), undefined);
});
