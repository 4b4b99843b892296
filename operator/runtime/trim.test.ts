// The cache transform: what trimMetadata, trimCustomObject and trimDeployment keep and drop
// (table tests), and jsonBytes. That the reconciler decides the same on trimmed AITasks, and
// the size bound's derivation from the v2 schema, are operator/cache-trim.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObjectMeta } from '../../api/schema/common.ts';
import { LAST_APPLIED_ANNOTATION } from './informer.ts';
import type { Deployment } from './kinds.ts';
import { jsonBytes, trimCustomObject, trimDeployment, trimMetadata, type CustomObject } from './trim.ts';

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
      want: { metadata: { name: 'd' }, spec: {}, status: {} },
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
        metadata: trimMetadata({ ...fullMeta, name: 'd' }),
        spec: { replicas: 0, selector: { matchLabels: { app: 'web' } } },
        status: { readyReplicas: 0, availableReplicas: 2 },
      },
    },
  ];
  for (const c of cases) assert.deepEqual(trimDeployment(c.in), c.want, c.name);
});

test('jsonBytes counts UTF-8 bytes of the JSON text', () => {
  assert.equal(jsonBytes({ a: 'é' }), Buffer.byteLength('{"a":"é"}'));
  assert.equal(jsonBytes('x'.repeat(10)), 12);
});
