// `npm test` interrupted while a test file holds a cluster of its own: SIGTERM ends it with
// 143, and no process of that cluster, of the test file or of the runner's shared environment
// is left (harness/interrupted-run.ts; the real node's share is real-node/interrupt.cluster.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { interruptedRun } from './interrupted-run.ts';

test('npm test, sent SIGTERM while a test file holds a cluster, exits 143 and leaves no process behind', async () => {
  const run = await interruptedRun();
  assert.ok(
    run.runningBefore >= 4,
    `the environment's and the test file's processes ran: ${run.runningBefore}`,
  );
  assert.equal(run.code, 143, run.stderr);
  assert.deepEqual(run.left, [], 'no process of the run is left');
  assert.equal(run.testFileAlive, false, "the test file's process is gone");
});
