import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IdleRelease } from './release.ts';

test('IdleRelease: one collection once the queue is idle after a burst, none before', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let collections = 0;
  const release = new IdleRelease({ gc: () => (collections += 1), burst: 3, delayMs: 100 });
  release.reconciled(true);
  release.reconciled(false);
  t.mock.timers.tick(1000);
  assert.equal(collections, 0, 'fewer reconciles than a burst, or not idle: nothing');
  release.reconciled(true);
  t.mock.timers.tick(99);
  assert.equal(collections, 0, 'not before the delay');
  t.mock.timers.tick(1);
  assert.equal(collections, 1);
  release.reconciled(true);
  release.reconciled(true);
  t.mock.timers.tick(1000);
  assert.equal(collections, 1, 'the count starts again after a collection');
});

test('IdleRelease: a trickle of idle reconciles gets one collection per burst, not one per reconcile', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let collections = 0;
  const release = new IdleRelease({ gc: () => (collections += 1), burst: 10, delayMs: 100 });
  for (let i = 0; i < 100; i++) {
    release.reconciled(true);
    t.mock.timers.tick(50);
  }
  assert.ok(collections >= 8 && collections <= 10, `${collections} collections`);
});

test('IdleRelease: without a collection (gc undefined) and after stop nothing runs', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const none = new IdleRelease({ gc: undefined, burst: 1 });
  none.reconciled(true);
  let collections = 0;
  const stopped = new IdleRelease({ gc: () => (collections += 1), burst: 1, delayMs: 10 });
  stopped.reconciled(true);
  stopped.stop();
  t.mock.timers.tick(100);
  assert.equal(collections, 0);
});

test('IdleRelease: soon() runs one collection after the delay, not two when one is pending', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let collections = 0;
  const release = new IdleRelease({ gc: () => (collections += 1), burst: 1, delayMs: 100 });
  release.soon();
  release.reconciled(true);
  t.mock.timers.tick(100);
  assert.equal(collections, 1);
});
