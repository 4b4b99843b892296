// An attack file's `after` hook after a `before` hook that failed part-way: stopStarted skips
// what was never set, stops the rest in order, and reports the first failure only after
// every part had its turn.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stopStarted, type Stoppable } from './stage.ts';

test('what a failed before never set is skipped; what it set is stopped, in order', async () => {
  const order: string[] = [];
  const part = (name: string): Stoppable => ({ stop: () => Promise.resolve(void order.push(name)) });
  const closing = (name: string): Stoppable => ({ close: () => Promise.resolve(void order.push(name)) });
  const never: Stoppable | undefined = undefined;
  await stopStarted(never, part('prometheus'), never, closing('models'));
  assert.deepEqual(order, ['prometheus', 'models']);
  await stopStarted();
});

test('every part is stopped even when one throws; the first error is rethrown', async () => {
  const stopped: string[] = [];
  const failing = (why: string): Stoppable => ({ stop: () => Promise.reject(new Error(why)) });
  await assert.rejects(
    stopStarted(
      failing('first'),
      { stop: () => Promise.resolve(void stopped.push('stage')) },
      failing('second'),
    ),
    /first/,
  );
  assert.deepEqual(stopped, ['stage']);
});
