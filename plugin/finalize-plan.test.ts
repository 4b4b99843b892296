import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_BY_ANNOTATION } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { Lease } from '../lib/lease-liveness.ts';
import {
  judgeLeases,
  MAX_SKIPS_SHOWN,
  planFinalize,
  planHasWork,
  type FinalizeInputs,
  type OperatorEvidence,
} from './finalize-plan.ts';
import type { NodeLike } from './kinds.ts';

const dead: OperatorEvidence = {
  verdict: 'expired',
  message: 'op last renewed 600s ago',
  lease: 'aiops-system/aiops-operator-leader',
};
const alive: OperatorEvidence = {
  verdict: 'alive',
  message: 'op renewed 2s ago',
  lease: 'aiops-system/aiops-operator-leader',
};
const UID = 'uid-of-web';
/** A managedFields entry of `manager` owning the cordon and, when `mark`, our mark. */
const fieldsOf = (manager: string, mark: boolean) => ({
  manager,
  operation: 'Update',
  fieldsType: 'FieldsV1',
  fieldsV1: {
    ...(mark ? { 'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } } } : {}),
    'f:spec': { 'f:unschedulable': {} },
  },
});
const cordoned: NodeLike = {
  metadata: {
    annotations: { [CORDONED_BY_ANNOTATION]: UID },
    managedFields: [fieldsOf('aiops-operator', true)],
  },
  spec: { unschedulable: true },
};
/** Marked by this AITask, then uncordoned and cordoned again by an admin (kubectl owns the field now). */
const recordoned: NodeLike = {
  metadata: {
    annotations: { [CORDONED_BY_ANNOTATION]: UID },
    managedFields: [
      {
        ...fieldsOf('aiops-operator', true),
        fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } } },
      },
      fieldsOf('kubectl-cordon', false),
    ],
  },
  spec: { unschedulable: true },
};
const someoneElses: NodeLike = { spec: { unschedulable: true } };
const anotherTasks: NodeLike = {
  metadata: { annotations: { [CORDONED_BY_ANNOTATION]: 'uid-of-other' } },
  spec: { unschedulable: true },
};

function inputs(
  over: {
    deleting?: boolean;
    finalizers?: string[];
    nodes?: string[];
    operator?: OperatorEvidence;
    live?: Record<string, NodeLike | undefined>;
  } = {},
): FinalizeInputs {
  const task: v2.AITask = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: {
      name: 'web',
      namespace: 'prod',
      uid: UID,
      resourceVersion: '42',
      finalizers: over.finalizers ?? [FINALIZER],
      ...(over.deleting === false ? {} : { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'CordonNode' },
    },
    status: { cordonedNodes: over.nodes ?? [] },
  };
  return {
    task,
    operator: over.operator ?? dead,
    nodes: new Map(Object.entries(over.live ?? {})),
  };
}
const flags = { force: false, all: false, skipCleanup: false };

void test('planFinalize refuses objects not being deleted and live operators unless forced', () => {
  assert.match(planFinalize(inputs({ deleting: false }), flags).refusal ?? '', /not being deleted/);
  assert.match(planFinalize(inputs({ operator: alive }), flags).refusal ?? '', /operator is alive .*--force/);
  assert.equal(planFinalize(inputs({ operator: alive }), { ...flags, force: true }).refusal, undefined);
  const unknown: OperatorEvidence = { verdict: 'unknown', message: 'forbidden', lease: 'x/y' };
  assert.match(
    planFinalize(inputs({ operator: unknown }), flags).refusal ?? '',
    /cannot tell whether the operator is alive \(forbidden\).*--force/,
  );
  assert.equal(planFinalize(inputs({ operator: unknown }), { ...flags, force: true }).refusal, undefined);
});

void test('judgeLeases: the Lease found by name in any namespace; of several, the most alive', () => {
  const now = new Date('2026-01-01T00:10:00Z');
  const lease = (ns: string, holder: string, renewedAgoS: number): Lease => ({
    metadata: { name: 'leader', namespace: ns },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      renewTime: new Date(now.getTime() - renewedAgoS * 1000).toISOString(),
    },
  });
  const cases: [Lease[], string, string, RegExp][] = [
    [[], 'absent', '*/leader', /no Lease named leader in any namespace/],
    [[lease('operators', 'op', 2)], 'alive', 'operators/leader', /renewed the leader Lease 2s ago/],
    [[lease('operators', 'op', 600)], 'expired', 'operators/leader', /600s ago/],
    [[lease('operators', '', 2)], 'released', 'operators/leader', /no holder/],
    [
      [lease('old', 'a', 600), lease('operators', 'b', 1), lease('gone', '', 1)],
      'alive',
      'operators/leader',
      /3 Leases named leader: operators\/leader alive, old\/leader expired, gone\/leader released/,
    ],
  ];
  for (const [found, verdict, where, message] of cases) {
    const e = judgeLeases(found, 'leader', now);
    assert.deepEqual([e.verdict, e.lease], [verdict, where]);
    assert.match(e.message, message);
  }
});

void test('planFinalize removes only our finalizer unless --all', () => {
  const both = inputs({ finalizers: [FINALIZER, 'example.com/keep'] });
  assert.deepEqual(planFinalize(both, flags).finalizers, [
    { name: FINALIZER, action: 'remove' },
    { name: 'example.com/keep', action: 'keep' },
  ]);
  assert.ok(planFinalize(both, { ...flags, all: true }).finalizers.every((f) => f.action === 'remove'));
  const foreign = planFinalize(
    inputs({ finalizers: ['example.com/keep'], nodes: ['n1'], live: { n1: cordoned } }),
    flags,
  );
  assert.deepEqual(foreign.cleanup, [], 'no cleanup is owed without our finalizer');
  assert.equal(planHasWork(foreign), false);
});

void test("planFinalize uncordons exactly the nodes still owed: cordoned with this AITask's mark", () => {
  const plan = planFinalize(
    inputs({
      nodes: ['a', 'b', 'c', 'd', 'e', 'f'],
      live: { a: cordoned, b: { spec: {} }, d: someoneElses, e: anotherTasks, f: recordoned },
    }),
    flags,
  );
  const notOurs = `skip not cordoned by this AITask (no ${CORDONED_BY_ANNOTATION} mark with its UID)`;
  assert.deepEqual(
    plan.cleanup.map((c) => `${c.node} ${c.action} ${c.why}`),
    [
      'a uncordon cordoned by this AITask',
      'b skip already schedulable',
      'c skip the node no longer exists',
      `d ${notOurs}`,
      `e ${notOurs}`,
      "f skip cordoned again by someone else since this AITask's cordon: its mark no longer holds the node",
    ],
  );
  const skipped = planFinalize(inputs({ nodes: ['a'], live: { a: cordoned } }), {
    ...flags,
    skipCleanup: true,
  });
  assert.deepEqual(
    skipped.cleanup.map((c) => c.action),
    ['skip'],
  );
  assert.equal(planHasWork(skipped), true);
});

void test('planFinalize: a node carrying the mark is owed even when status omits it; thousands of made-up names make a bounded plan', () => {
  const made = Array.from({ length: 7000 }, (_, i) => `made-up-${i}`);
  const plan = planFinalize(
    inputs({ nodes: [...made, 'b'], live: { real: cordoned, b: { spec: {} } } }),
    flags,
  );
  assert.deepEqual(plan.cleanup.slice(0, 1), [
    { node: 'real', action: 'uncordon', why: 'cordoned by this AITask' },
  ]);
  assert.equal(plan.cleanup.length, 1 + MAX_SKIPS_SHOWN);
  assert.equal(plan.cleanupOmitted, 7001 - MAX_SKIPS_SHOWN);
  assert.equal(plan.cleanup[1]?.why, 'the node no longer exists');
  const partial = planFinalize(
    { ...inputs({ nodes: ['x', 'y'], live: { x: undefined } }), complete: false },
    flags,
  );
  assert.deepEqual(
    partial.cleanup.map((c) => `${c.node} ${c.why}`),
    [
      'x the node no longer exists',
      'y not looked up: nodes cannot be listed, and only the first names in status are read one by one',
    ],
  );
});
