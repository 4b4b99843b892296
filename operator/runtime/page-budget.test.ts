// The AITask cache's list page fits its byte budget in the worst case (issue 30, attack 2):
// a page of TASK_PAGE_SIZE objects each as large as the apiserver stores stays within
// TASK_PAGE_BYTES. test/attacks/big-status.test.ts shows the operator starting under the
// shipped memory limit's heap bound with 100 such tasks on a live cluster.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APISERVER_MAX_OBJECT_BYTES, TASK_PAGE_BYTES, TASK_PAGE_SIZE } from './trim.ts';

test('a page of the largest AITasks the apiserver stores fits the page budget', () => {
  assert.ok(Number.isInteger(TASK_PAGE_SIZE) && TASK_PAGE_SIZE >= 1, `page size ${TASK_PAGE_SIZE}`);
  assert.ok(TASK_PAGE_SIZE * APISERVER_MAX_OBJECT_BYTES <= TASK_PAGE_BYTES);
  assert.ok(
    (TASK_PAGE_SIZE + 1) * APISERVER_MAX_OBJECT_BYTES > TASK_PAGE_BYTES,
    'the largest page that fits',
  );
});
