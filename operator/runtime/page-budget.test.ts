// Every list the operator reads fits its page budget in the worst case: a page of objects each
// as large as the apiserver stores stays within the budget its size was chosen from
// (pageSizeFor, a property test), for the AITask and Deployment caches, a target's pods and
// ReplicaSets, and the lists paged by DEFAULT_PAGE_BYTES (nodes, Events, ControllerRevisions:
// operator/edges/node-snapshots.test.ts checks the node view uses it); and the answer bound
// of a page holds such a page.
// test/attacks/big-status.test.ts and other-kinds.test.ts show the operator starting in a
// memory cgroup of the shipped limit with such objects on a live cluster.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_PAGE_BYTES,
  LIST_FRAMING_BYTES,
  MAX_OBJECT_JSON_BYTES,
  pageResponseBytes,
} from '../../lib/kube/resources.ts';
import { DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_RESPONSE_BYTES } from '../../lib/kube/bounded-read.ts';
import {
  APISERVER_MAX_OBJECT_BYTES,
  pageSizeFor,
  POD_PAGE_BYTES,
  TASK_PAGE_BYTES,
  TASK_PAGE_SIZE,
} from './trim.ts';
import { TARGET_KINDS } from './target-kinds.ts';

/** The largest page of `objectBytes` objects that fits `pageBytes` is `size`. */
function fits(size: number, pageBytes: number, objectBytes = APISERVER_MAX_OBJECT_BYTES): void {
  assert.ok(Number.isInteger(size) && size >= 1, `page size ${size}`);
  assert.ok(size * objectBytes <= pageBytes || size === 1, `${size} objects fit ${pageBytes} bytes`);
  assert.ok((size + 1) * objectBytes > pageBytes || size === 500, 'the largest page that fits');
}

test('pageSizeFor gives the largest page of objects that fits the budget, 1 to 500', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 34 }), fc.integer({ min: 1, max: 2 ** 24 }), (page, object) =>
      fits(pageSizeFor(page, object), page, object),
    ),
  );
});

test('each list of the operator is paged so a page of the largest objects fits its budget', () => {
  const lists: [string, number, number, number][] = [
    ['aitasks', TASK_PAGE_SIZE, TASK_PAGE_BYTES, 10],
    ['deployments', pageSizeFor(TARGET_KINDS.Deployment.pageBytes), TARGET_KINDS.Deployment.pageBytes, 10],
    ['statefulsets', pageSizeFor(TARGET_KINDS.StatefulSet.pageBytes), TARGET_KINDS.StatefulSet.pageBytes, 5],
    ['pods and replicasets', pageSizeFor(POD_PAGE_BYTES), POD_PAGE_BYTES, 10],
    ['nodes, events, controllerrevisions', pageSizeFor(DEFAULT_PAGE_BYTES), DEFAULT_PAGE_BYTES, 10],
  ];
  for (const [what, size, bytes, objects] of lists) {
    fits(size, bytes);
    assert.equal(size, objects, what);
    assert.ok(pageResponseBytes(size) <= bytes + LIST_FRAMING_BYTES, `${what}: answer bound`);
    assert.ok(pageResponseBytes(size) <= DEFAULT_MAX_RESPONSE_BYTES, `${what}: under the transport's bound`);
  }
});

test('one object sent at its worst (every byte escaped) fits a watch line and a one-object page', () => {
  assert.ok(MAX_OBJECT_JSON_BYTES >= APISERVER_MAX_OBJECT_BYTES * 6);
  assert.ok(MAX_OBJECT_JSON_BYTES <= DEFAULT_MAX_LINE_BYTES);
  assert.ok(MAX_OBJECT_JSON_BYTES <= DEFAULT_MAX_RESPONSE_BYTES);
});
