import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  CORDONED_BY_ANNOTATION,
  CORDONED_BY_NAMESPACE_ANNOTATION,
  cordonHeld,
  markRelease,
  staleMarks,
  type MarkedNode,
  type MarkRelease,
} from './cordon.ts';

const ownsBoth = [
  {
    manager: 'aiops-operator',
    fieldsV1: {
      'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } },
      'f:spec': { 'f:unschedulable': {} },
    },
  },
];
const markOnly = [
  {
    manager: 'aiops-operator',
    fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } } },
  },
  { manager: 'kubectl-cordon', fieldsV1: { 'f:spec': { 'f:unschedulable': {} } } },
];

function node(
  name: string,
  o: { uid?: string; ns?: string; unschedulable?: boolean; fields?: unknown[] } = {},
): MarkedNode {
  const annotations: Record<string, string> = {};
  if (o.uid !== undefined) annotations[CORDONED_BY_ANNOTATION] = o.uid;
  if (o.ns !== undefined) annotations[CORDONED_BY_NAMESPACE_ANNOTATION] = o.ns;
  return {
    metadata: { name, annotations, ...(o.fields ? { managedFields: o.fields } : {}) },
    spec: { unschedulable: o.unschedulable ?? false },
  };
}

test('markRelease: table', () => {
  const live = (uid: string) => uid === 'alive';
  const cases: [string, MarkedNode, string | undefined, MarkRelease | undefined][] = [
    ['unmarked', node('n', { unschedulable: true }), undefined, undefined],
    [
      'live task, cordon held',
      node('n', { uid: 'alive', ns: 'a', unschedulable: true, fields: ownsBoth }),
      undefined,
      undefined,
    ],
    [
      'live task, admin uncordoned: drop the mark',
      node('n', { uid: 'alive', ns: 'a', fields: ownsBoth }),
      undefined,
      { node: 'n', uid: 'alive', namespace: 'a', why: 'lifted', uncordon: false },
    ],
    [
      'live task, admin uncordoned and cordoned again: drop the mark, keep the cordon',
      node('n', { uid: 'alive', ns: 'a', unschedulable: true, fields: markOnly }),
      undefined,
      { node: 'n', uid: 'alive', namespace: 'a', why: 'lifted', uncordon: false },
    ],
    [
      'orphan, cordon held: uncordon',
      node('n', { uid: 'gone', ns: 'a', unschedulable: true, fields: ownsBoth }),
      undefined,
      { node: 'n', uid: 'gone', namespace: 'a', why: 'orphaned', uncordon: true },
    ],
    [
      'orphan, cordon someone else’s now: unmark only',
      node('n', { uid: 'gone', unschedulable: true, fields: markOnly }),
      undefined,
      { node: 'n', uid: 'gone', why: 'orphaned', uncordon: false },
    ],
    [
      'orphan, out of --namespace scope',
      node('n', { uid: 'gone', ns: 'b', unschedulable: true, fields: ownsBoth }),
      'a',
      undefined,
    ],
    [
      'legacy mark without namespace, scoped operator',
      node('n', { uid: 'gone', unschedulable: true, fields: ownsBoth }),
      'a',
      undefined,
    ],
    [
      'orphan in scope',
      node('n', { uid: 'gone', ns: 'a', fields: ownsBoth }),
      'a',
      { node: 'n', uid: 'gone', namespace: 'a', why: 'orphaned', uncordon: false },
    ],
  ];
  for (const [what, n, scope, want] of cases) assert.deepEqual(markRelease(n, live, scope), want, what);
});

test('staleMarks (property): a cordon is lifted only for a gone task whose mark still holds it; live held marks stay', () => {
  const arb = fc.array(
    fc.record({
      uid: fc.option(fc.constantFrom('t1', 't2', 't3'), { nil: undefined }),
      unschedulable: fc.boolean(),
      fields: fc.constantFrom(ownsBoth, markOnly, []),
    }),
    { maxLength: 20 },
  );
  fc.assert(
    fc.property(arb, fc.subarray(['t1', 't2', 't3']), (specs, alive) => {
      const nodes = specs.map((s, i) =>
        node(`n${i}`, {
          ...(s.uid !== undefined ? { uid: s.uid } : {}),
          unschedulable: s.unschedulable,
          fields: s.fields,
        }),
      );
      const exists = (uid: string) => alive.includes(uid);
      const out = staleMarks(nodes, exists);
      for (const r of out) {
        const n = nodes[Number(r.node.slice(1))];
        if (r.uncordon) assert.ok(!exists(r.uid) && cordonHeld(n));
        if (exists(r.uid)) assert.ok(!cordonHeld(n) && r.why === 'lifted');
      }
      for (const [i, n] of nodes.entries())
        if (cordonHeld(n) && exists(specs[i]?.uid ?? ''))
          assert.ok(!out.some((r) => r.node === `n${i}`), 'a live task keeps its held cordon');
    }),
    { seed: 21 },
  );
});
