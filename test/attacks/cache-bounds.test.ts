// Attacks on the operator's memory through what a tenant may write on its own AITasks
// (bounded caches): annotations up to the apiserver's 256 KiB limit on every task,
// and an approval annotation (the one annotation the cache keeps) too large to be one. The
// caches keep only what the operator reads (operator/runtime/trim.ts) and refuse what is
// still too large, so the cache grows by a few KiB of heap charge per task (its spec and the
// status the operator writes), not by the annotations; asserted on the operator's own
// `aiops_cache_bytes`, never on time. After the
// attack the operator process is the one that started and alice's task still follows her
// changes (stage.ts `bystander`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { eventually } from '../support/operator.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** AITasks mallory creates, each with an ANNOTATION_BYTES annotation. */
const TASKS = 300;
/** 200 KiB: under the apiserver's 256 KiB limit on all annotations of an object together. */
const ANNOTATION_BYTES = 200 * 1024;
/** Creates in flight at once. */
const WIDTH = 8;

function task(name: string, annotations: Record<string, string>): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, annotations },
    spec: {
      target: { kind: 'Deployment', name: `missing-${name}` },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

test(`${TASKS} AITasks with ${ANNOTATION_BYTES / 1024} KiB annotations each are cached without them; an oversized approval is refused`, async (t) => {
  const m = stage.mallory;
  const op = stage.operator;
  const cachedBefore = await op.metric('aiops_cache_objects', { resource: 'aitasks' });
  const bytesBefore = await op.metric('aiops_cache_bytes', { resource: 'aitasks' });
  const blob = 'x'.repeat(ANNOTATION_BYTES);
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < TASKS) {
        const i = next++;
        await m.tasks.create(m.namespace, task(`blob-${i}`, { 'mallory.example.com/blob': blob }));
      }
    }),
  );
  // The approval is the one annotation kept: one too large to be a decision id makes the
  // task too large to cache, and it is refused rather than cached.
  await m.tasks.create(m.namespace, task('huge-approval', { [APPROVE_ANNOTATION]: blob }));

  const cached = await eventually(
    `the ${TASKS} tasks to be cached`,
    async () => {
      const n = await op.metric('aiops_cache_objects', { resource: 'aitasks' });
      return n >= cachedBefore + TASKS ? n : undefined;
    },
    120_000,
  );
  assert.equal(cached, cachedBefore + TASKS, 'the oversized approval is not cached');
  await eventually('the oversized approval to be refused', async () =>
    (await op.metric('aiops_cache_objects_refused_total', { resource: 'aitasks' })) >= 1 ? true : undefined,
  );
  const grown = (await op.metric('aiops_cache_bytes', { resource: 'aitasks' })) - bytesBefore;
  const raw = TASKS * ANNOTATION_BYTES;
  t.diagnostic(
    `cache grew by ${grown} bytes of heap charge for ${TASKS} tasks carrying ${raw} bytes of annotations`,
  );
  assert.ok(
    grown < TASKS * 16 * 1024,
    `the cache grew by ${grown} bytes for ${TASKS} tasks (≤ 16 KiB of heap charge each expected; their annotations alone are ${raw} bytes)`,
  );
  assert.ok(
    op.logs.some(
      (l) =>
        l['msg'] === 'object too large to cache; ignored until it shrinks' &&
        l['key'] === `${m.namespace}/huge-approval`,
    ),
    'the refusal is logged with the task',
  );
  // Alice's change waits at most for the reconciles of mallory's 300 new tasks (each one's
  // first status, revision and Event) on a shared 2-core machine; the claim here is memory.
  await undisturbed(60_000);
});
