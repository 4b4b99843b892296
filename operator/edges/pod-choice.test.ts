import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownedPods, pickPod, type ReplicaSet } from './pod-choice.ts';
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

test('ownedPods: only pods whose controller is a ReplicaSet whose controller is the Deployment (by UID)', () => {
  const ref = (kind: string, uid: string, controller = true) => ({
    apiVersion: 'apps/v1',
    kind,
    name: `${kind.toLowerCase()}-${uid}`,
    uid,
    controller,
  });
  const rs = (uid: string, owner?: ReturnType<typeof ref>): ReplicaSet => ({
    metadata: { name: `rs-${uid}`, uid, ...(owner ? { ownerReferences: [owner] } : {}) },
  });
  const pod = (name: string, ...owners: ReturnType<typeof ref>[]): Pod => ({
    metadata: { name, uid: `pod-${name}`, ownerReferences: owners },
    spec: { nodeName: 'n1' },
  });
  const sets = [
    rs('rs1', ref('Deployment', 'dep')),
    rs('rs2', ref('Deployment', 'other')),
    rs('rs3', ref('Deployment', 'dep', false)),
    rs('rs4'),
  ];
  const pods = [
    pod('owned', ref('ReplicaSet', 'rs1')),
    pod('bare'),
    pod('other-deployment', ref('ReplicaSet', 'rs2')),
    pod('rs-not-controlled-by-dep', ref('ReplicaSet', 'rs3')),
    pod('orphan-rs', ref('ReplicaSet', 'rs4')),
    pod('not-controller-ref', ref('ReplicaSet', 'rs1', false)),
    pod('controller-is-a-job', ref('Job', 'rs1')),
    pod('unknown-rs', ref('ReplicaSet', 'nope')),
    pod('points-at-the-deployment', ref('Deployment', 'dep')),
  ];
  assert.deepEqual(
    ownedPods('dep', sets, pods).map((p) => p.metadata.name),
    ['owned'],
  );
  assert.deepEqual(ownedPods(undefined, sets, pods), [], 'a Deployment without UID owns nothing');
  assert.deepEqual(ownedPods('', [rs('', ref('Deployment', ''))], [pod('x', ref('ReplicaSet', ''))]), []);
});
