import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_BY_ANNOTATION, cordonedBy, cordonPatch, uncordonPatch, type MarkedNode } from './cordon.ts';

test("cordonedBy: only a cordoned node carrying the AITask's own UID", () => {
  const marked = (uid: string, unschedulable = true): MarkedNode => ({
    metadata: { annotations: { [CORDONED_BY_ANNOTATION]: uid } },
    spec: { unschedulable },
  });
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

test('the patches: cordon marks, uncordon unmarks, both bound to the resourceVersion read', () => {
  assert.deepEqual(cordonPatch('u1', '7'), {
    metadata: { annotations: { [CORDONED_BY_ANNOTATION]: 'u1' }, resourceVersion: '7' },
    spec: { unschedulable: true },
  });
  assert.deepEqual(uncordonPatch('8'), {
    metadata: { annotations: { [CORDONED_BY_ANNOTATION]: null }, resourceVersion: '8' },
    spec: { unschedulable: null },
  });
});
