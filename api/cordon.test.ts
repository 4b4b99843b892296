import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CORDON_FIELD_MANAGER,
  CORDONED_BY_ANNOTATION,
  CORDONED_BY_NAMESPACE_ANNOTATION,
  cordonedBy,
  cordonHeld,
  cordonHeldBy,
  cordonPatch,
  markOf,
  uncordonPatch,
  unmarkPatch,
  type MarkedNode,
} from './cordon.ts';

const marked = (uid: string, unschedulable = true): MarkedNode => ({
  metadata: { annotations: { [CORDONED_BY_ANNOTATION]: uid } },
  spec: { unschedulable },
});

/** managedFields entries as the apiserver records them: manager → the fields it set. */
function managed(...entries: [string, { spec?: boolean; mark?: boolean }][]): unknown[] {
  return entries.map(([manager, f]) => ({
    manager,
    operation: 'Update',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      ...(f.mark ? { 'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } } } : {}),
      ...(f.spec ? { 'f:spec': { 'f:unschedulable': {} } } : {}),
    },
  }));
}

const held = (uid: string, fields: unknown[], unschedulable = true): MarkedNode => ({
  metadata: { annotations: { [CORDONED_BY_ANNOTATION]: uid }, managedFields: fields },
  spec: { unschedulable },
});

test("cordonedBy: only a cordoned node carrying the AITask's own UID", () => {
  const cases: [string, MarkedNode | undefined, string | undefined, boolean][] = [
    ['its own mark, cordoned', marked('u1'), 'u1', true],
    ["another AITask's mark", marked('u2'), 'u1', false],
    ['cordoned by someone else (no mark)', { spec: { unschedulable: true } }, 'u1', false],
    ['its mark, but uncordoned since', marked('u1', false), 'u1', false],
    ['no UID never matches', marked(''), '', false],
    ['no UID at all', marked('u1'), undefined, false],
    ['the node is gone', undefined, 'u1', false],
  ];
  for (const [what, node, uid, want] of cases) assert.equal(cordonedBy(node, uid), want, what);
});

test('cordonHeld: the cordon is the one the mark was written with (one manager owns both)', () => {
  const op = CORDON_FIELD_MANAGER;
  const cases: [string, MarkedNode, boolean][] = [
    ['our patch set both', held('u1', managed([op, { spec: true, mark: true }])), true],
    ['legacy manager name, one patch', held('u1', managed(['unknown', { spec: true, mark: true }])), true],
    [
      'admin uncordoned and cordoned again: another manager owns unschedulable',
      held('u1', managed([op, { mark: true }], ['kubectl-cordon', { spec: true }])),
      false,
    ],
    ['a mark whose cordon was lifted', held('u1', managed([op, { mark: true }]), false), false],
    ['no managedFields: never held', marked('u1'), false],
    [
      'unmarked cordon',
      { metadata: { managedFields: managed([op, { spec: true }]) }, spec: { unschedulable: true } },
      false,
    ],
    ['a hostile managedFields entry (not an object)', held('u1', [null, 'x', 7]), false],
  ];
  for (const [what, node, want] of cases) assert.equal(cordonHeld(node), want, what);
  assert.equal(cordonHeldBy(held('u1', managed([op, { spec: true, mark: true }])), 'u1'), true);
  assert.equal(cordonHeldBy(held('u1', managed([op, { spec: true, mark: true }])), 'u2'), false);
});

test('markOf: UID and namespace, nothing for an empty or missing mark', () => {
  assert.equal(markOf(undefined), undefined);
  assert.equal(markOf(marked('')), undefined);
  assert.deepEqual(markOf(marked('u1')), { uid: 'u1' });
  assert.deepEqual(
    markOf({
      metadata: {
        annotations: { [CORDONED_BY_ANNOTATION]: 'u1', [CORDONED_BY_NAMESPACE_ANNOTATION]: 'team-a' },
      },
    }),
    { uid: 'u1', namespace: 'team-a' },
  );
});

test('the patches: cordon marks, uncordon and unmark remove the mark, all bound to the resourceVersion read', () => {
  assert.deepEqual(cordonPatch('u1', 'team-a', '7'), {
    metadata: {
      annotations: { [CORDONED_BY_ANNOTATION]: 'u1', [CORDONED_BY_NAMESPACE_ANNOTATION]: 'team-a' },
      resourceVersion: '7',
    },
    spec: { unschedulable: true },
  });
  const unmark = { [CORDONED_BY_ANNOTATION]: null, [CORDONED_BY_NAMESPACE_ANNOTATION]: null };
  assert.deepEqual(uncordonPatch('8'), {
    metadata: { annotations: unmark, resourceVersion: '8' },
    spec: { unschedulable: null },
  });
  assert.deepEqual(unmarkPatch('9'), { metadata: { annotations: unmark, resourceVersion: '9' } });
});
