// The AITask cache's transform (runtime/trim.ts with the approval annotation kept, as
// assembly.ts builds it) against what the reconciler reads: the pure functions it decides with
// (decide, applyApproval, evaluate, adviceContext, targetOwner) answer the same on the
// original and the trimmed AITask and Deployment, whatever annotations of whatever size a
// tenant adds (property test); and the cache's object bound (runtime/memory-ledger.ts): the
// largest valid spec, every string at its longest in two-byte characters, with seven
// conditions as long, is charged under two thirds of it, every key the schema names being shared.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { APPROVE_ANNOTATION, CONVERSION_ANNOTATION } from '../api/install.ts';
import * as v2 from '../api/schema/v2.ts';
import type { JSONSchemaProps } from '../api/schema/infer.ts';
import { v2Task } from '../test/support/arbitraries.ts';
import { applyApproval } from './decision/approval.ts';
import { targetOwner } from './decision/caps.ts';
import { decide, DEFAULTS, type MetricObservation, type TargetObservation } from './decision/decide.ts';
import { evaluate } from './decision/evaluate.ts';
import { adviceContext } from './llm/advice.ts';
import { LAST_APPLIED_ANNOTATION } from './runtime/informer.ts';
import type { Deployment } from './runtime/kinds.ts';
import { heapCharge } from './runtime/heap-charge.ts';
import { MAX_OBJECT_CHARGE } from './runtime/memory-ledger.ts';
import { trimCustomObject, trimWorkload } from './runtime/trim.ts';
import { TASK_KEYS } from './task-cache-share.ts';

const trimTask = trimCustomObject([APPROVE_ANNOTATION]);

const target: fc.Arbitrary<TargetObservation> = fc.oneof(
  fc.record({ found: fc.constant(true as const), replicas: fc.integer({ min: 0, max: 50 }) }),
  fc.record({
    found: fc.constant(false as const),
    reason: fc.constantFrom('TargetNotFound' as const, 'DuplicateTarget' as const),
    message: fc.string({ maxLength: 20 }),
  }),
);
const metric: fc.Arbitrary<MetricObservation | undefined> = fc.option(
  fc.oneof(
    fc.record({ ok: fc.constant(true as const), value: fc.double({ noNaN: true, min: -1e6, max: 1e6 }) }),
    fc.record({
      ok: fc.constant(false as const),
      reason: fc.constantFrom('NoData' as const, 'QueryRefused' as const),
      message: fc.string({ maxLength: 20 }),
    }),
  ),
  { nil: undefined },
);
/** Annotations a tenant adds: any keys (the approval among them sometimes), up to 64 KiB values. */
const extraAnnotations = fc.dictionary(
  fc.oneof(
    fc.constantFrom(APPROVE_ANNOTATION, LAST_APPLIED_ANNOTATION, CONVERSION_ANNOTATION),
    fc.string({ minLength: 1 }),
  ),
  fc.oneof(
    fc.string(),
    fc.nat({ max: 65_536 }).map((n) => 'x'.repeat(n)),
  ),
  { maxKeys: 4 },
);
const deployment: fc.Arbitrary<Deployment> = fc.record({
  metadata: fc.record({ name: fc.constant('web'), uid: fc.uuid(), labels: fc.constant({ a: 'b' }) }),
  spec: fc.record({ replicas: fc.nat(50), template: fc.constant({ big: 'x' }) }),
  status: fc.record({ replicas: fc.nat(50), readyReplicas: fc.nat(50), availableReplicas: fc.nat(50) }),
});

test('what the reconciler decides is the same on the original and the trimmed objects', () => {
  const now = Date.parse('2026-06-01T00:00:00Z');
  fc.assert(
    fc.property(
      v2Task,
      extraAnnotations,
      target,
      metric,
      deployment,
      fc.uuid(),
      (base, extra, observed, value, d, id) => {
        const task: v2.AITask = {
          ...base,
          metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, ...extra } },
        };
        const trimmed = trimTask(structuredClone(task));
        const td = trimWorkload('Deployment')(structuredClone(d));
        const verdict = decide(task, observed, value, now, DEFAULTS);
        assert.deepEqual(decide(trimmed, observed, value, now, DEFAULTS), verdict);
        const approval = applyApproval(task, verdict);
        assert.deepEqual(applyApproval(trimmed, verdict), approval);
        assert.equal(td.metadata.uid, d.metadata.uid);
        assert.deepEqual(
          evaluate(trimmed, approval.verdict, now, id, 60_000),
          evaluate(task, approval.verdict, now, id, 60_000),
        );
        const since = '2026-05-31T23:59:00Z';
        assert.deepEqual(
          adviceContext(trimmed, 1, since, td, [], now, DEFAULTS),
          adviceContext(task, 1, since, d, [], now, DEFAULTS),
        );
        assert.equal(targetOwner([trimmed], false), targetOwner([task], false));
        assert.equal(td.spec?.replicas, d.spec?.replicas);
      },
    ),
    { numRuns: 300 },
  );
});

test('trimmed, an AITask loses every annotation but the approval, whatever their size', () => {
  fc.assert(
    fc.property(v2Task, extraAnnotations, (base, extra) => {
      const annotations = { ...base.metadata.annotations, ...extra };
      const trimmed = trimTask({ ...base, metadata: { ...base.metadata, annotations } });
      const want = Object.hasOwn(annotations, APPROVE_ANNOTATION)
        ? { [APPROVE_ANNOTATION]: annotations[APPROVE_ANNOTATION] }
        : undefined;
      assert.deepEqual(trimmed.metadata.annotations, want);
      assert.equal(trimmed.metadata.labels, undefined);
      assert.equal(trimmed.metadata.managedFields, undefined);
    }),
  );
});

/**
 * JSON bytes of the largest value `schema` admits, each character of a string costing
 * `perChar` bytes (1: plain ASCII; 6: every character escaped as \uXXXX); Infinity when a
 * string or array has no bound. Keys are counted as written, numbers as 24 bytes.
 */
function maxJsonBytes(schema: JSONSchemaProps, perChar: number): number {
  if (schema.enum !== undefined)
    return Math.max(
      ...schema.enum.map((v) => JSON.stringify(v).length * (typeof v === 'string' ? perChar : 1)),
    );
  switch (schema.type) {
    case 'string':
      return schema.maxLength === undefined ? Infinity : 2 + schema.maxLength * perChar;
    case 'integer':
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'array':
      return schema.maxItems === undefined || schema.items === undefined
        ? Infinity
        : 2 + schema.maxItems * (1 + maxJsonBytes(schema.items, perChar));
    case 'object':
      return Object.entries(schema.properties ?? {}).reduce(
        (n, [k, v]) => n + JSON.stringify(k).length + 2 + maxJsonBytes(v, perChar),
        2,
      );
    default:
      return Infinity;
  }
}

test('the object bound: the largest valid spec in two-byte characters, with seven long conditions, is charged under two thirds of it', () => {
  const schema: JSONSchemaProps = v2.specSchema;
  const plain = maxJsonBytes(schema, 1);
  assert.ok(plain < 8 * 1024, `largest spec, plain: ${plain} bytes`);
  const wide = (n: number): string => '✓'.repeat(n);
  const largest = trimTask({
    apiVersion: v2.API_VERSION,
    kind: 'AITask',
    metadata: {
      name: 'n'.repeat(253),
      namespace: 'n'.repeat(63),
      uid: crypto.randomUUID(),
      resourceVersion: '18446744073709551615',
      generation: 2 ** 53 - 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      deletionTimestamp: '2026-01-01T00:00:00Z',
      finalizers: ['aiops.example.com/finalizer'],
      annotations: { [APPROVE_ANNOTATION]: crypto.randomUUID() },
    },
    spec: {
      target: { kind: 'Deployment', name: 'd'.repeat(253), namespace: 'n'.repeat(63) },
      trigger: { query: wide(4096), threshold: -1.234567890123456e-300, forSeconds: 86400 },
      remediation: { action: 'CordonNode', scale: { step: 1000, minReplicas: 1e9, maxReplicas: 1e9 } },
      decision: { mode: 'LLM', llm: { endpoint: wide(2048), model: wide(256) } },
    },
    status: {
      phase: 'Monitoring',
      message: wide(1024),
      conditions: Array.from({ length: 7 }, (_, i) => ({
        type: `Condition${i}`,
        status: 'True' as const,
        reason: 'Reason',
        message: wide(1024),
        lastTransitionTime: '2026-01-01T00:00:00Z',
      })),
    },
  });
  const charge = heapCharge(largest, TASK_KEYS);
  assert.ok(charge < (MAX_OBJECT_CHARGE * 2) / 3, `largest trimmed task: charged ${charge} bytes`);
});
