// Attack "big status, OOM on every start": a tenant who may write
// aitasks/status fills the status of many AITasks so that the operator's first list after a
// restart is too big for its heap. Closed in two places: the CRD bounds every status field
// (api/schema, api/crd-bounds.test.ts), so the apiserver refuses each oversized field with
// 422 at the door, a 1.3 MB status.message included; and the AITask cache lists in pages
// whose worst case fits the heap (operator/runtime/trim.ts TASK_PAGE_SIZE), so even tasks
// filled to the most the CRD and etcd allow (32 conditions of 32,768 characters and a
// 200 KiB annotation, ~1.3 MB each) do not stop the operator. The operator runs in the
// stage's memory cgroup of the shipped limit, its heap sized from it as in the pod, so
// running out of either kills the process and fails the test. A node carrying the cordon mark of a deleted task makes the
// restarted leader's mark sweep confirm the orphan by listing every AITask, which it reads a
// page at a time keeping only references (operator/mark-sweep.ts). Last, the upgrade: a status written past today's bounds under
// the unbounded CRD stays writable once the bounds arrive (the apiserver ratchets unchanged
// fields), and the operator's own writes to it go through (api/status/bounded.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AITaskClient } from '../../api/aitask-client.ts';
import { CORDONED_BY_ANNOTATION, CORDONED_BY_NAMESPACE_ANNOTATION } from '../../api/cordon.ts';
import { buildCRD, type CustomResourceDefinition } from '../../api/crd.ts';
import { InvalidError } from '../../lib/kube/errors.ts';
import { CONDITIONS_MAX_ITEMS, MESSAGE_MAX_LENGTH } from '../../api/schema/common.ts';
import type { JSONSchemaProps } from '../../api/schema/infer.ts';
import * as v1 from '../../api/schema/v1.ts';
import * as v1alpha1 from '../../api/schema/v1alpha1.ts';
import * as v2 from '../../api/schema/v2.ts';
import { installCRD } from '../../scripts/lib/crd-install.ts';
import { eventually } from '../support/operator.ts';
import { createFullTasks } from './full-tasks.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

const T = '2026-01-01T00:00:00Z';

/** A v2 status with every field set to a small valid value, one entry in each list. */
function smallV2(): v2.Status {
  const record: v2.DecisionRecord = {
    id: 'probe',
    action: 'Noop',
    source: 'rules',
    reason: 'probe',
    blockedBy: 'DryRun',
    at: T,
    target: { namespace: 'mallory', name: 'gone', uid: 'u' },
    llm: { model: 'm', latencyMs: 1 },
    effect: { pod: 'p', podUID: 'u', node: 'n' },
  };
  return {
    phase: 'Monitoring',
    message: 'probe',
    lastDecision: record,
    pendingDecision: { ...record, executed: true },
    lastExecutionTime: T,
    breachSince: T,
    cordonedNodes: ['probe-node'],
    conditions: [{ type: 'Probe', status: 'True', reason: 'Probe', message: 'probe', lastTransitionTime: T }],
  };
}

/** Small valid statuses of the other versions, with the schema each is written against. */
const VERSIONS = {
  v2: { schema: v2.statusSchema, status: smallV2 },
  v1: {
    schema: v1.statusSchema,
    status: (): v1.Status => ({
      phase: 'Monitoring',
      lastDecision: 'noop (rules, not executed): probe',
      lastExecutionTime: T,
      conditions: [
        { type: 'Probe', status: 'True', reason: 'Probe', message: 'probe', lastTransitionTime: T },
      ],
    }),
  },
  v1alpha1: {
    schema: v1alpha1.statusSchema,
    status: (): v1alpha1.Status => ({ phase: 'Monitoring', message: 'probe' }),
  },
} as const;

type Segment = string | number;

/** Every length- or count-bounded node of `schema`: its path (lists entered at their first item) and schema. */
function boundedNodes(
  schema: JSONSchemaProps,
  path: Segment[] = [],
): { path: Segment[]; schema: JSONSchemaProps }[] {
  const here = schema.maxLength !== undefined || schema.maxItems !== undefined ? [{ path, schema }] : [];
  return [
    ...here,
    ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) => boundedNodes(s, [...path, k])),
    ...(schema.items ? boundedNodes(schema.items, [...path, 0]) : []),
  ];
}

/** A value one past `schema`'s bound that breaks nothing else (format and pattern kept valid). */
function oversized(schema: JSONSchemaProps, path: Segment[]): unknown {
  if (schema.maxItems !== undefined) {
    const n = schema.maxItems + 1;
    if (path.at(-1) === 'conditions')
      return Array.from({ length: n }, (_, i) => ({
        type: `Probe${i}`,
        status: 'True',
        reason: 'Probe',
        message: 'probe',
        lastTransitionTime: T,
      }));
    return Array.from({ length: n }, (_, i) => `node-${i}`);
  }
  const n = (schema.maxLength ?? 0) + 1;
  if (schema.format === 'date-time') return `2026-01-01T00:00:00.${'0'.repeat(n)}Z`;
  const text = `R${'a'.repeat(n - 1)}`;
  if (schema.pattern !== undefined) assert.match(text, new RegExp(schema.pattern, 'u'), path.join('.'));
  return text;
}

/** `obj` with `value` at `path` (a copy). */
function setAt(obj: unknown, path: Segment[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (Array.isArray(obj)) return obj.map((v: unknown, i) => (i === head ? setAt(v, rest, value) : v));
  const o = obj as Record<string, unknown>;
  return { ...o, [head]: setAt(o[head], rest, value) };
}

test('mallory cannot write any status field past its bound, at any version: each write is refused with 422', async (t) => {
  const m = stage.mallory;
  await m.tasks.create(m.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'probe' },
    spec: {
      target: { kind: 'Deployment', name: 'gone' },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  });
  const clients: Record<keyof typeof VERSIONS, AITaskClient | AITaskClient<'v1'> | AITaskClient<'v1alpha1'>> =
    {
      v2: m.tasks,
      v1: m.tasksV1,
      v1alpha1: m.tasksV1alpha1,
    };
  let refused = 0;
  for (const [version, { schema, status }] of Object.entries(VERSIONS) as [
    keyof typeof VERSIONS,
    (typeof VERSIONS)[keyof typeof VERSIONS],
  ][]) {
    const client = clients[version] as AITaskClient;
    // The small status is accepted: a refusal below is the bound's, nothing else's.
    await client.patchStatus(m.namespace, 'probe', status() as v2.Status);
    for (const node of boundedNodes(schema)) {
      const where = `${version} status.${node.path.join('.')}`;
      const body = setAt(status(), node.path, oversized(node.schema, node.path)) as v2.Status;
      await assert.rejects(client.patchStatus(m.namespace, 'probe', body), (err: unknown) => {
        assert.ok(err instanceof InvalidError, `${where}: ${String(err)}`);
        assert.equal(err.code, 422, where);
        return true;
      });
      refused++;
    }
  }
  t.diagnostic(`${refused} oversized status fields refused`);
  assert.ok(refused >= 40, `${refused} fields tried`);
  // The write of the original attack: 1.3 MB in status.message.
  await assert.rejects(
    m.tasks.patchStatus(m.namespace, 'probe', { message: 'x'.repeat(1_300_000) }),
    (err: unknown) => err instanceof InvalidError && err.code === 422,
  );
});

/** AITasks mallory fills to the most the CRD allows. */
const TASKS = 100;

test(`${TASKS} AITasks filled to the CRD's bounds: the operator restarts under the shipped memory limit and alice's task still reconciles`, async (t) => {
  const m = stage.mallory;
  const bytes = await createFullTasks(m, TASKS);
  t.diagnostic(
    `each task is ~${Math.round(bytes / 1024)} KiB; ${TASKS} of them ~${Math.round((TASKS * bytes) / 2 ** 20)} MiB`,
  );
  assert.ok(bytes > 1_200_000, `a filled task is ${bytes} bytes`);

  // The mark of a task deleted without its finalizer: the new leader's first sweep lists every
  // AITask, all of mallory's filled ones among them, to confirm it is gone.
  const marked = (await stage.nodes.list(undefined)).items[0]?.metadata.name;
  assert.ok(marked !== undefined, 'the stage has a node');
  await stage.nodes.patch(undefined, marked, {
    metadata: {
      annotations: {
        [CORDONED_BY_ANNOTATION]: 'uid-of-a-deleted-task',
        [CORDONED_BY_NAMESPACE_ANNOTATION]: m.namespace,
      },
    },
  });

  // The operator's start reads them all before it is ready; under the memory limit, a list
  // page that does not fit kills it and restartOperator throws.
  await stage.restartOperator();
  t.diagnostic(`operator restarted under the shipped memory limit, V8 heap limit ${stage.heapLimitMiB} MiB`);
  await eventually(
    "the orphaned mark to be released by the new leader's sweep",
    async () => {
      const n = await stage.nodes.get(undefined, marked);
      return n.metadata.annotations?.[CORDONED_BY_ANNOTATION] === undefined ? true : undefined;
    },
    120_000,
  );
  await eventually(
    `the ${TASKS} filled tasks to be refused by the new operator's cache`,
    async () => {
      const n = await stage.operator.metric('aiops_cache_objects_refused_total', { resource: 'aitasks' });
      return n >= TASKS ? n : undefined;
    },
    120_000,
  );
  await undisturbed(120_000);
});

/** `crd` as releases before the bounds served it: no maxLength or maxItems anywhere in status. */
function withoutStatusBounds(crd: CustomResourceDefinition): CustomResourceDefinition {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k]) => k !== 'maxLength' && k !== 'maxItems')
        .map(([k, v]) => [k, strip(v)]),
    );
  };
  return {
    ...crd,
    spec: {
      ...crd.spec,
      versions: crd.spec.versions.map((v) => {
        const root = v.schema.openAPIV3Schema;
        const status = root.properties?.['status'];
        return {
          ...v,
          schema: {
            openAPIV3Schema: {
              ...root,
              properties: {
                ...root.properties,
                ...(status ? { status: strip(status) as JSONSchemaProps } : {}),
              },
            },
          },
        };
      }),
    },
  };
}

/**
 * How long a CRD update may take to reach the apiserver's handler, in ms: it rebuilds the
 * resource's storage and watch cache, here over the ~123 MiB the case before left, which on a
 * loaded machine took over the 60 s default.
 */
const SCHEMA_SWAP_MS = 240_000;

test('upgrade: a status past the new bounds stays writable where unchanged, and the operator still writes it', async () => {
  const m = stage.mallory;
  const bounded = buildCRD({
    conversion: {
      url: `https://127.0.0.1:${stage.webhook.port}/convert`,
      caBundle: Buffer.from(stage.webhook.ca).toString('base64'),
    },
  });
  await installCRD(stage.admin, withoutStatusBounds(bounded));
  await m.tasks.create(m.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    // Too large to cache until the annotation goes: the operator leaves it alone meanwhile.
    metadata: { name: 'legacy', annotations: { 'mallory.example.com/blob': 'y'.repeat(100 * 1024) } },
    spec: {
      target: { kind: 'Deployment', name: 'gone' },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  });
  // Past the bounds, yet within the cache's 64 KiB once the annotation is gone.
  const legacy: v2.Status = {
    message: 'z'.repeat(MESSAGE_MAX_LENGTH + 100),
    conditions: Array.from({ length: CONDITIONS_MAX_ITEMS + 8 }, (_, i) => ({
      type: `Legacy${i}`,
      status: 'True' as const,
      reason: 'Legacy',
      message: 'written before the bounds',
      lastTransitionTime: T,
    })),
  };
  await eventually(
    'the unbounded schema to take the legacy status',
    async () =>
      m.tasks.patchStatus(m.namespace, 'legacy', legacy).then(
        () => true,
        (err: unknown) => {
          if (err instanceof InvalidError) return undefined;
          throw err;
        },
      ),
    SCHEMA_SWAP_MS,
  );
  await installCRD(stage.admin, bounded);
  // Each try writes another message: one the old schema still took would be ratcheted (an
  // unchanged value stays valid), so repeating it could never be refused.
  let tries = 0;
  await eventually(
    'the bounded schema to refuse a new oversized message',
    async () =>
      m.tasks
        .patchStatus(m.namespace, 'probe', { message: `${++tries}`.padEnd(MESSAGE_MAX_LENGTH + 1, 'z') })
        .then(
          () => undefined,
          (err: unknown) => {
            if (err instanceof InvalidError) return true;
            throw err;
          },
        ),
    SCHEMA_SWAP_MS,
  );
  // Ratcheting: a write that leaves the oversized fields as they are is accepted.
  await m.tasks.patchStatus(m.namespace, 'legacy', { phase: 'Monitoring' });
  // Now small enough to cache, the operator reconciles it. Its write changes the conditions
  // list (its own types added): cut to the bounds, its own kept first, it is accepted and
  // observes the new generation.
  const patched = await m.tasks.patch(m.namespace, 'legacy', {
    metadata: { annotations: { 'mallory.example.com/blob': null } },
    spec: { trigger: { threshold: 2 } },
  });
  const seen = await eventually(
    'the operator to write the legacy task at its new generation',
    async () => {
      const t = await m.tasks.get(m.namespace, 'legacy');
      return (t.status?.observedGeneration ?? 0) >= (patched.metadata.generation ?? 1) ? t : undefined;
    },
    120_000,
  );
  const conditions = seen.status?.conditions ?? [];
  assert.ok(conditions.length <= CONDITIONS_MAX_ITEMS, `${conditions.length} conditions`);
  assert.ok(
    conditions.some((c) => c.type === 'TargetFound'),
    "the operator's own condition is kept over the cap",
  );
  await undisturbed(120_000);
});
