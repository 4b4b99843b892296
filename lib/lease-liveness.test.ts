import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseLiveness, type Lease } from './lease-liveness.ts';

const now = new Date('2026-01-01T12:00:00Z');
const lease = (spec: NonNullable<Lease['spec']>): Lease => ({ metadata: { name: 'l' }, spec });

void test('leaseLiveness judges each kind of evidence', () => {
  const cases: [string, Lease | undefined, string, number | undefined][] = [
    ['absent', undefined, 'absent', undefined],
    ['released', lease({ holderIdentity: '', renewTime: '2026-01-01T11:59:59.000000Z' }), 'released', 1],
    [
      'fresh',
      lease({ holderIdentity: 'op-1', leaseDurationSeconds: 15, renewTime: '2026-01-01T11:59:50.123456Z' }),
      'alive',
      9,
    ],
    [
      'within skew',
      lease({ holderIdentity: 'op-1', leaseDurationSeconds: 15, renewTime: '2026-01-01T11:59:40Z' }),
      'alive',
      20,
    ],
    [
      'stale',
      lease({ holderIdentity: 'op-1', leaseDurationSeconds: 15, renewTime: '2026-01-01T11:50:00Z' }),
      'expired',
      600,
    ],
    ['default duration', lease({ holderIdentity: 'op-1', renewTime: '2026-01-01T11:59:39Z' }), 'expired', 21],
    ['acquire only', lease({ holderIdentity: 'op-1', acquireTime: '2026-01-01T11:59:58Z' }), 'alive', 2],
    ['never renewed', lease({ holderIdentity: 'op-1' }), 'expired', undefined],
    ['future renewal', lease({ holderIdentity: 'op-1', renewTime: '2026-01-01T12:00:30Z' }), 'alive', 0],
  ];
  for (const [name, input, verdict, since] of cases) {
    const got = leaseLiveness(input, now);
    assert.equal(got.verdict, verdict, name);
    assert.equal(got.secondsSinceRenewal, since, name);
    assert.ok(got.message.length > 0, name);
  }
});

void test('leaseLiveness names the holder in its message', () => {
  const got = leaseLiveness(lease({ holderIdentity: 'pod-a', renewTime: '2026-01-01T11:00:00Z' }), now);
  assert.match(got.message, /pod-a last renewed the leader Lease 3600s ago/);
});
