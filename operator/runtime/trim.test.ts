// The cache transform: what trimMetadata, trimCustomObject, trimWorkload, trimPod and
// trimReplicaSet keep and drop (table tests), which Deployment selectors are refused
// (selectorRefusal: a table at the bounds and a property that every real-sized one passes).
// That the reconciler decides the same on trimmed AITasks, and
// the size bound's derivation from the v2 schema, are operator/cache-trim.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObjectMeta } from '../../api/schema/common.ts';
import { LAST_APPLIED_ANNOTATION } from './informer.ts';
import type { Deployment } from './kinds.ts';
import fc from 'fast-check';
import {
  MAX_SELECTOR_BYTES,
  MAX_SELECTOR_TERMS,
  selectorRefusal,
  trimCustomObject,
  trimWorkload,
  trimMetadata,
  trimPod,
  trimReplicaSet,
  type CustomObject,
} from './trim.ts';

/** The one annotation kept in these tests (the AITask cache keeps the approval). */
const KEEP = 'aiops.example.com/approve';
const trimTask = trimCustomObject([KEEP]);

const fullMeta: ObjectMeta = {
  name: 'a',
  generateName: 'a-',
  namespace: 'ns',
  uid: 'u-1',
  resourceVersion: '7',
  generation: 3,
  creationTimestamp: '2026-01-01T00:00:00Z',
  deletionTimestamp: '2026-01-02T00:00:00Z',
  deletionGracePeriodSeconds: 0,
  labels: { app: 'web' },
  annotations: {
    [LAST_APPLIED_ANNOTATION]: '{"big":"json"}',
    [KEEP]: 'id-1',
    'aiops.example.com/conversion-data': '{}',
    'tenant.example.com/blob': 'x'.repeat(1000),
  },
  finalizers: ['aiops.example.com/finalizer'],
  ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }],
  managedFields: [{ manager: 'kubectl' }],
};

test('trimMetadata keeps identity, versions, age, deletion, finalizers and the annotations asked for', () => {
  const cases: { name: string; meta: ObjectMeta; keep: readonly string[]; want: ObjectMeta }[] = [
    { name: 'empty', meta: {}, keep: [], want: {} },
    {
      name: 'everything, approval kept',
      meta: fullMeta,
      keep: [KEEP],
      want: {
        name: 'a',
        namespace: 'ns',
        uid: 'u-1',
        resourceVersion: '7',
        generation: 3,
        creationTimestamp: '2026-01-01T00:00:00Z',
        deletionTimestamp: '2026-01-02T00:00:00Z',
        finalizers: ['aiops.example.com/finalizer'],
        annotations: { [KEEP]: 'id-1' },
      },
    },
    {
      name: 'no annotation asked for: no annotations at all',
      meta: fullMeta,
      keep: [],
      want: {
        name: 'a',
        namespace: 'ns',
        uid: 'u-1',
        resourceVersion: '7',
        generation: 3,
        creationTimestamp: '2026-01-01T00:00:00Z',
        deletionTimestamp: '2026-01-02T00:00:00Z',
        finalizers: ['aiops.example.com/finalizer'],
      },
    },
    {
      name: 'an annotation asked for but absent is not invented',
      meta: { name: 'a', annotations: { other: 'x' } },
      keep: [KEEP],
      want: { name: 'a' },
    },
    {
      name: 'an empty approval stays (it is a value the approval code reads)',
      meta: { name: 'a', annotations: { [KEEP]: '' } },
      keep: [KEEP],
      want: { name: 'a', annotations: { [KEEP]: '' } },
    },
    {
      name: 'an inherited property is no annotation',
      meta: {
        name: 'a',
        annotations: Object.create({ [KEEP]: 'x' }) as Record<string, string>,
      },
      keep: [KEEP],
      want: { name: 'a' },
    },
  ];
  for (const c of cases) assert.deepEqual(trimMetadata(c.meta, c.keep), c.want, c.name);
});

test('an AITask keeps apiVersion, kind, spec and status whole; the input is not changed', () => {
  const task: CustomObject = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: structuredClone(fullMeta),
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
    },
    status: { phase: 'Monitoring', cordonedNodes: ['n1'] },
  };
  const before = structuredClone(task);
  const trimmed = trimTask(task);
  assert.deepEqual(task, before);
  assert.deepEqual(trimmed, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: trimMetadata(fullMeta, [KEEP]),
    spec: task.spec,
    status: task.status,
  });
  assert.equal('status' in trimTask({ ...task, status: undefined }), false);
});

test('a Deployment keeps only replicas, selector, ready and available replicas', () => {
  const cases: { name: string; in: Deployment; want: Deployment }[] = [
    {
      name: 'bare',
      in: { metadata: { name: 'd' } },
      want: { kind: 'Deployment', metadata: { name: 'd' }, spec: {}, status: {} },
    },
    {
      name: 'full',
      in: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { ...fullMeta, name: 'd' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { annotations: { big: 'x'.repeat(1000) } } },
        },
        status: { replicas: 3, readyReplicas: 0, availableReplicas: 2 },
      },
      want: {
        kind: 'Deployment',
        metadata: trimMetadata({ ...fullMeta, name: 'd' }),
        spec: { replicas: 0, selector: { matchLabels: { app: 'web' } } },
        status: { readyReplicas: 0, availableReplicas: 2 },
      },
    },
  ];
  for (const c of cases) assert.deepEqual(trimWorkload('Deployment')(c.in), c.want, c.name);
  assert.deepEqual(
    trimWorkload('StatefulSet')({ metadata: { name: 's' }, spec: { replicas: 2 } }),
    { kind: 'StatefulSet', metadata: { name: 's' }, spec: { replicas: 2 }, status: {} },
    "the kind is the cache's",
  );
});

test('a pod keeps identity, age, deletion, its controller reference, node, phase, Ready and its restarts added up', () => {
  const pod = {
    metadata: {
      ...fullMeta,
      ownerReferences: [
        { apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-1', controller: true },
      ],
    },
    spec: { nodeName: 'n1', containers: [{ env: [{ value: 'x'.repeat(1000) }] }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'False' },
      ],
      containerStatuses: [{ restartCount: 2 }, { restartCount: 3 }],
    },
  };
  assert.deepEqual(trimPod(pod), {
    metadata: {
      name: 'a',
      namespace: 'ns',
      uid: 'u-1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      deletionTimestamp: '2026-01-02T00:00:00Z',
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-1', controller: true },
      ],
    },
    spec: { nodeName: 'n1' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ restartCount: 5 }],
    },
  });
  assert.deepEqual(trimPod({ metadata: { name: 'bare' } }), { metadata: { name: 'bare' }, status: {} });
  assert.deepEqual(trimReplicaSet({ metadata: fullMeta }), { metadata: { uid: 'u-1' } });
});

test('a Deployment selector past MAX_SELECTOR_TERMS terms or MAX_SELECTOR_BYTES bytes is refused, saying which', () => {
  const labels = (n: number, key = (i: number) => `k${i}`): Record<string, string> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [key(i), 'v']));
  const longKey = (i: number): string => `${'p'.repeat(250)}${i}.io/${'n'.repeat(60)}`;
  const cases: { name: string; selector: Parameters<typeof selectorRefusal>[0]; refused?: RegExp }[] = [
    { name: 'none', selector: undefined },
    { name: 'one label', selector: { matchLabels: { app: 'web' } } },
    { name: 'at the term bound', selector: { matchLabels: labels(MAX_SELECTOR_TERMS) } },
    {
      name: 'past the term bound',
      selector: { matchLabels: labels(MAX_SELECTOR_TERMS + 1) },
      refused: /33 terms/,
    },
    {
      name: 'values count as terms',
      selector: {
        matchExpressions: [
          { key: 'tier', operator: 'In', values: Array.from({ length: 40 }, (_, i) => `t${i}`) },
        ],
      },
      refused: /41 terms/,
    },
    { name: 'ten of the longest keys', selector: { matchLabels: labels(10, longKey) } },
    {
      name: 'past the byte bound',
      selector: { matchLabels: labels(14, longKey) },
      refused: /bytes, more than the 4096/,
    },
  ];
  for (const c of cases) {
    const got = selectorRefusal(c.selector);
    if (c.refused === undefined) assert.equal(got, undefined, c.name);
    else assert.match(got ?? '', c.refused, c.name);
  }
  assert.equal(MAX_SELECTOR_BYTES, 4096);
});

test('every selector of up to five labels of any valid length passes (property)', () => {
  const name = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/);
  fc.assert(
    fc.property(fc.dictionary(name, name, { maxKeys: 5 }), (matchLabels) => {
      assert.equal(selectorRefusal({ matchLabels }), undefined);
    }),
  );
});
