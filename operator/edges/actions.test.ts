import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickPod } from './actions.ts';
import type { Pod } from '../runtime/kinds.ts';

const pod = (
  name: string,
  ready: boolean,
  restarts: number,
  created = '2026-01-01T00:00:00Z',
  deleting = false,
): Pod => ({
  metadata: { name, creationTimestamp: created, ...(deleting ? { deletionTimestamp: created } : {}) },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: [{ restartCount: restarts }],
  },
});

test('pickPod: not-ready first, then most restarts, then oldest, never a terminating pod', () => {
  assert.equal(pickPod([pod('a', true, 9), pod('b', false, 0)])?.metadata.name, 'b');
  assert.equal(pickPod([pod('a', true, 1), pod('b', true, 4)])?.metadata.name, 'b');
  assert.equal(pickPod([pod('a', true, 0, '2026-01-02T00:00:00Z'), pod('b', true, 0)])?.metadata.name, 'b');
  assert.equal(pickPod([pod('a', false, 0, undefined, true)]), undefined);
  assert.equal(pickPod([]), undefined);
});
