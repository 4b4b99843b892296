import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IdleRelease, oldGenerationBytes } from './release.ts';

const MiB = 1024 * 1024;

/** An IdleRelease on a heap the test sets, counting its collections (which bring the heap to `live`). */
function fakeHeap(burst: number, growthBytes = 10 * MiB, live = 50 * MiB) {
  const state = { heap: live, collections: 0 };
  const release = new IdleRelease({
    gc: () => {
      state.collections += 1;
      state.heap = live;
    },
    burst,
    delayMs: 100,
    growthBytes,
    heapBytes: () => state.heap,
  });
  return { state, release };
}

test('IdleRelease: one collection once the queue is idle after a burst that grew the heap, none before', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { state, release } = fakeHeap(3);
  release.soon();
  t.mock.timers.tick(100);
  assert.equal(state.collections, 1, 'the start-up collection');
  state.heap += 30 * MiB;
  release.reconciled(true);
  release.reconciled(false);
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 1, 'fewer reconciles than a burst, or not idle: nothing');
  release.reconciled(true);
  t.mock.timers.tick(99);
  assert.equal(state.collections, 1, 'not before the delay');
  t.mock.timers.tick(1);
  assert.equal(state.collections, 2);
  release.reconciled(true);
  release.reconciled(true);
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 2, 'the count starts again after a collection');
});

test('IdleRelease: a trickle of idle reconciles that does not grow the heap gets no collection', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { state, release } = fakeHeap(10);
  release.soon();
  t.mock.timers.tick(100);
  for (let i = 0; i < 1000; i++) {
    // V8's own collections keep the old generation within a few MiB of the live heap.
    state.heap = 50 * MiB + (i % 7) * MiB;
    release.reconciled(true);
    t.mock.timers.tick(50);
  }
  assert.equal(state.collections, 1, 'only the start-up collection');
});

test('IdleRelease: a trickle that grows the heap gets one collection per growthBytes of it, not one per burst', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { state, release } = fakeHeap(10, 10 * MiB);
  release.soon();
  t.mock.timers.tick(100);
  for (let i = 0; i < 1000; i++) {
    state.heap += MiB / 10;
    release.reconciled(true);
    t.mock.timers.tick(50);
  }
  // 100 MiB grown in all: about one collection per 10 MiB, where counting alone ran 100.
  assert.ok(state.collections >= 1 + 8 && state.collections <= 1 + 10, `${state.collections} collections`);
});

test('IdleRelease: without a collection (gc undefined) and after stop nothing runs', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let measured = 0;
  const none = new IdleRelease({ gc: undefined, burst: 1, heapBytes: () => (measured += 1) });
  none.reconciled(true);
  assert.equal(measured, 0, 'nothing measured without a collection to run');
  let collections = 0;
  const stopped = new IdleRelease({
    gc: () => (collections += 1),
    burst: 1,
    delayMs: 10,
    growthBytes: 0,
    heapBytes: () => 0,
  });
  stopped.reconciled(true);
  stopped.stop();
  t.mock.timers.tick(100);
  assert.equal(collections, 0);
});

test('IdleRelease: soon() runs one collection after the delay, not two when one is pending', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { state, release } = fakeHeap(1);
  state.heap += 100 * MiB;
  release.soon();
  release.reconciled(true);
  t.mock.timers.tick(100);
  assert.equal(state.collections, 1);
});

test('oldGenerationBytes: counts what the old generation holds, not the young one', () => {
  const before = oldGenerationBytes();
  assert.ok(before > 0);
  // Arrays this large go to the large-object space, part of the old generation, at once
  // (a typed array would not do: its bytes live outside the V8 heap).
  const held = Array.from({ length: 4 }, () => new Array<number>((2 * MiB) / 8).fill(1.5));
  const after = oldGenerationBytes();
  assert.ok(after - before >= 4 * 2 * MiB * 0.9, `${after - before} bytes more`);
  assert.equal(held.length, 4);
});
