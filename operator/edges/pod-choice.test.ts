// Choosing the pod to act on (pickPod) and ownership (ownedSetUIDs, podsControlledBy): table tests; and that the
// trimmed pods and ReplicaSets the adapter keeps (trim.ts trimPod, trimReplicaSet) lead to the
// same choice and the same owned pods as the objects read whole (a property test), so
// trimming before keeping changes nothing the operator decides.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ordinal, ownedSetUIDs, pickPod, podsControlledBy, type ReplicaSet } from './pod-choice.ts';
import type { Pod } from '../runtime/kinds.ts';
import { trimPod, trimReplicaSet } from '../runtime/trim.ts';

/** The pods the Deployment with UID `deploymentUID` owns, read all at once: the oracle of the paged reading. */
function ownedPods(
  deploymentUID: string | undefined,
  sets: readonly ReplicaSet[],
  pods: readonly Pod[],
): Pod[] {
  return podsControlledBy('ReplicaSet', new Set(ownedSetUIDs(deploymentUID, sets)), pods);
}

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

test('pickPod for a StatefulSet: the highest ordinal first, whatever its health, never a terminating pod', () => {
  const order = 'highestOrdinal';
  assert.equal(
    pickPod([pod('db-0', false, 9), pod('db-2', true, 0), pod('db-1', true, 0)], order)?.metadata.name,
    'db-2',
  );
  assert.equal(pickPod([pod('db-10', true, 0), pod('db-9', true, 0)], order)?.metadata.name, 'db-10');
  assert.equal(
    pickPod([pod('db-1', true, 0), pod('db-2', true, 0, undefined, true)], order)?.metadata.name,
    'db-1',
  );
  assert.equal(pickPod([pod('db-0', true, 0, undefined, true)], order), undefined);
  assert.deepEqual([ordinal(pod('db-12', true, 0)), ordinal(pod('db', true, 0))], [12, -1]);
});

test('pickPod takes the pod the metric names when it is among the target’s live pods, else its order', () => {
  const pods = [pod('db-0', true, 0), pod('db-1', true, 0), pod('db-2', true, 0, undefined, true)];
  assert.equal(pickPod(pods, 'highestOrdinal', 'db-0')?.metadata.name, 'db-0');
  assert.equal(
    pickPod(pods, 'highestOrdinal', 'other-9')?.metadata.name,
    'db-1',
    'not the target’s: its order',
  );
  assert.equal(pickPod(pods, 'highestOrdinal', 'db-2')?.metadata.name, 'db-1', 'a terminating pod never');
  assert.equal(pickPod(pods, 'worst', 'db-1')?.metadata.name, 'db-1');
});

test('podsControlledBy: a StatefulSet owns the pods whose controller reference is it, by UID', () => {
  const owned = (name: string, kind: string, uid: string, controller = true): Pod => ({
    metadata: { name, ownerReferences: [{ apiVersion: 'apps/v1', kind, name: 'db', uid, controller }] },
  });
  const pods = [
    owned('db-0', 'StatefulSet', 's1'),
    owned('db-1', 'StatefulSet', 's2'),
    owned('db-2', 'StatefulSet', 's1', false),
    owned('db-3', 'ReplicaSet', 's1'),
    { metadata: { name: 'db-4' } },
  ];
  assert.deepEqual(
    podsControlledBy('StatefulSet', new Set(['s1']), pods).map((p) => p.metadata.name),
    ['db-0'],
  );
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

const uid = fc.constantFrom('d1', 'd2', 'rs1', 'rs2', 'rs3', '');
const ownerRef = fc.record({
  apiVersion: fc.constantFrom('apps/v1', 'v1'),
  kind: fc.constantFrom('Deployment', 'ReplicaSet', 'AITask'),
  name: fc.constantFrom('a', 'b'),
  uid,
  controller: fc.boolean(),
});
const anyPod: fc.Arbitrary<Pod> = fc.record({
  metadata: fc.record(
    {
      name: fc.constantFrom('p1', 'p2', 'p3', 'p4'),
      namespace: fc.constant('ns'),
      uid: fc.string({ maxLength: 4 }),
      creationTimestamp: fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'),
      deletionTimestamp: fc.constant('2026-01-03T00:00:00Z'),
      labels: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 })),
      annotations: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 50 })),
      ownerReferences: fc.array(ownerRef, { maxLength: 3 }),
    },
    { requiredKeys: ['name'] },
  ),
  spec: fc.record({ nodeName: fc.constantFrom('n1', 'n2') }, { requiredKeys: [] }),
  status: fc.record(
    {
      phase: fc.constantFrom('Running', 'Pending'),
      conditions: fc.array(
        fc.record({
          type: fc.constantFrom('Ready', 'PodScheduled'),
          status: fc.constantFrom('True', 'False'),
        }),
        { maxLength: 3 },
      ),
      containerStatuses: fc.array(fc.record({ restartCount: fc.nat(5) }, { requiredKeys: [] }), {
        maxLength: 3,
      }),
    },
    { requiredKeys: [] },
  ),
});
const anySet: fc.Arbitrary<ReplicaSet> = fc.record({
  metadata: fc.record({
    name: fc.constant('rs'),
    uid,
    ownerReferences: fc.array(ownerRef, { maxLength: 2 }),
  }),
});

test('trimmed pods and ReplicaSets give the same owned pods and the same choice as whole ones (property)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('d1', 'd2'),
      fc.array(anySet, { maxLength: 4 }),
      fc.array(anyPod, { maxLength: 6 }),
      (deployment, sets, pods) => {
        const whole = ownedPods(deployment, sets, pods);
        const setUIDs = new Set(ownedSetUIDs(deployment, sets.map(trimReplicaSet)));
        const trimmed = podsControlledBy('ReplicaSet', setUIDs, pods.map(trimPod));
        assert.deepEqual(
          trimmed.map((p) => p.metadata.name),
          whole.map((p) => p.metadata.name),
        );
        const a = pickPod(whole);
        const b = pickPod(trimmed);
        assert.equal(b?.metadata.name, a?.metadata.name);
        assert.equal(b?.metadata.uid, a?.metadata.uid);
        assert.equal(b?.spec?.nodeName, a?.spec?.nodeName);
      },
    ),
  );
});
