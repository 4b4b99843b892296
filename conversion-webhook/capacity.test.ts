// Table and property tests of the webhook's capacity bookkeeping (capacity.ts), without a
// network: deadlines grow with size, one address never holds more than its share, the total
// never passes its budget, a smaller holder is always served by pushing out the biggest, and
// the slots keep their cap.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bodyDeadlineMs, PeerShares, Slots } from './capacity.ts';

test('a body deadline is the base plus the size at the minimum rate', () => {
  assert.equal(bodyDeadlineMs(0, 5000, 1024 * 1024), 5000);
  assert.equal(bodyDeadlineMs(1024 * 1024, 5000, 1024 * 1024), 6000);
  assert.equal(bodyDeadlineMs(8 * 1024 * 1024, 5000, 1024 * 1024), 13_000);
  fc.assert(
    fc.property(fc.nat(1e9), fc.nat(1e9), (a, b) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      assert.ok(bodyDeadlineMs(lo, 5000, 1024) <= bodyDeadlineMs(hi, 5000, 1024));
    }),
  );
});

test('an address over its share is refused; a request alone of its address always fits its share', () => {
  const p = new PeerShares({ maxBytesPerPeer: 10, maxBytes: 40 });
  const big = p.admit('a', 15, () => undefined);
  assert.equal(typeof big, 'function', 'alone, over the share');
  assert.equal(
    p.admit('a', 1, () => undefined),
    'peer_share',
  );
  assert.equal(typeof p.admit('b', 10, () => undefined), 'function');
  if (typeof big === 'function') big();
  assert.equal(p.bytesOf('a'), 0);
  assert.equal(typeof p.admit('a', 4, () => undefined), 'function');
});

test('a full total: a smaller holder pushes out the newest request of the biggest, never the reverse', () => {
  const p = new PeerShares({ maxBytesPerPeer: 10, maxBytes: 20 });
  const evicted: string[] = [];
  p.admit('x', 4, () => evicted.push('x1'));
  p.admit('x', 6, () => evicted.push('x2'));
  p.admit('y', 10, () => evicted.push('y1'));
  assert.equal(p.bytes, 20);
  const apiserver = p.admit('apiserver', 3, () => evicted.push('a'));
  assert.equal(typeof apiserver, 'function');
  assert.deepEqual(evicted, ['x2'], "the biggest holder's newest request gave way");
  assert.equal(p.bytesOf('x'), 4);
  assert.equal(
    p.admit('y', 1, () => undefined),
    'peer_share',
  );
  assert.equal(
    p.admit('z', 10, () => undefined),
    'overloaded',
    'as big as the biggest: refused',
  );
});

test('a full total that pushing out cannot free enough: refused, and nobody is pushed out', () => {
  const p = new PeerShares({ maxBytesPerPeer: 10, maxBytes: 25 });
  const evicted: string[] = [];
  for (const [peer, bytes] of [
    ['a', 3],
    ['a', 1],
    ['a', 5],
    ['b', 8],
    ['b', 2],
  ] as const)
    assert.equal(typeof p.admit(peer, bytes, () => evicted.push(peer)), 'function');
  assert.equal(
    p.admit('c', 9, () => undefined),
    'overloaded',
    "b's newest (2) would leave b at 8, below c's 9, and 17 + 9 still passes 25",
  );
  assert.deepEqual(evicted, []);
  assert.equal(p.bytesOf('b'), 10);
  assert.equal(p.bytes, 19);
});

test('property: shares and the total hold, and whoever holds least is served', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('admit' as const),
      peer: fc.nat(5),
      bytes: fc.integer({ min: 1, max: 12 }),
    }),
    fc.record({ kind: fc.constant('release' as const), index: fc.nat(50) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
      const p = new PeerShares({ maxBytesPerPeer: 10, maxBytes: 25 });
      const releases: (() => void)[] = [];
      for (const o of ops) {
        if (o.kind === 'release') {
          releases[o.index % Math.max(1, releases.length)]?.();
          continue;
        }
        const peer = `p${o.peer}`;
        const level = p.bytesOf(peer) + o.bytes;
        const held = [0, 1, 2, 3, 4, 5].map((i) => p.bytesOf(`p${i}`));
        const total = p.bytes;
        const evicted = new Set<string>();
        const r = p.admit(peer, o.bytes, () => undefined);
        const after = [0, 1, 2, 3, 4, 5].map((i) => p.bytesOf(`p${i}`));
        for (const [i, b] of after.entries()) if (i !== o.peer && b < (held[i] ?? 0)) evicted.add(`p${i}`);
        if (typeof r === 'function') releases.push(r);
        else {
          assert.deepEqual(after, held, 'a refusal pushes nobody out');
          if (r === 'overloaded') {
            const above = held.reduce((sum, b, i) => sum + (i === o.peer ? 0 : Math.max(0, b - level)), 0);
            assert.ok(
              total + o.bytes - above > 25,
              'refused for the total only when the holders above it cannot make room',
            );
          } else assert.ok(level - o.bytes > 0 && level > 10);
        }
        for (const v of evicted)
          assert.ok(
            (held[Number(v.slice(1))] ?? 0) > level,
            `${v} pushed out while it held no more than ${peer} would`,
          );
        assert.ok(p.bytes <= 25, `total ${p.bytes}`);
        if (typeof r === 'function' && level > o.bytes) assert.ok(p.bytesOf(peer) <= 10, 'within its share');
      }
      for (const r of releases) r();
      assert.equal(p.bytes, 0, 'everything released');
    }),
    { numRuns: 2000 },
  );
});

test('slots: at most the count, the bytes unless alone, released once', () => {
  let count = 0;
  let bytes = 0;
  const s = new Slots(2, 10, {
    count: { inc: () => count++, dec: () => count-- },
    bytes: { inc: (v) => (bytes += v), dec: (v) => (bytes -= v) },
  });
  const a = s.enter(20);
  assert.ok(a, 'alone, over the byte budget');
  assert.equal(s.enter(1), undefined, 'the budget is spent');
  a();
  a();
  assert.equal(count, 0);
  const b = s.enter(4);
  const c = s.enter(4);
  assert.ok(b && c);
  assert.equal(s.enter(1), undefined, 'the count is spent');
  assert.equal(count, 2);
  assert.equal(bytes, 8);
});
