// Attack "a per-object bound times an unbounded count": while the operator is down, mallory
// fills her namespace with AITasks in the shape that costs the heap most for their JSON
// (thousands of short unique finalizers each: a 7-byte finalizer is a 40-byte heap string
// behind an 8-byte slot), some past the object bound in heap charge and some just under it,
// enough of those to pass her namespace's share, with a query full of escapes and two-byte
// characters. Bounded by one memory ledger in heap charge (operator/runtime/memory-ledger.ts,
// heap-charge.ts): the operator starts in the stage's memory cgroup of the shipped limit
// (past it the kernel kills it and the start throws), becomes ready with every one of them
// refused or cached within mallory's share, counts what it refused and logs each once, and
// alice's task is still evaluated.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { entryCharge } from '../../operator/runtime/informer.ts';
import { MAX_OBJECT_CHARGE } from '../../operator/runtime/memory-ledger.ts';
import { trimCustomObject } from '../../operator/runtime/trim.ts';
import { TASK_KEYS } from '../../operator/task-cache-share.ts';
import { ledgerAt, ledgerMisfits, SHIPPED } from '../../scripts/security/inventory-ledger.ts';
import { eventually } from '../support/operator.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** Tasks past the object bound: the review's shape, 7,400 short unique finalizers each (~60 KB of JSON, ~350 KiB of heap). */
const OVER = 700;
const OVER_FINALIZERS = 7400;
/**
 * Tasks just under the object bound (900 short finalizers and QUERY, ~53 KiB of heap each):
 * more than mallory's share holds.
 */
const UNDER = 150;
const UNDER_FINALIZERS = 900;
/** Creates in flight at once. */
const WIDTH = 8;

/** A query at the schema's 4,096 characters, of JSON escapes and two-byte characters: never evaluated, its task refused or its target missing. */
const QUERY = `vector(0) # ${'"\\\u0001✓é'.repeat(800)}`.slice(0, 4096);

/** Finalizer `j` of task `i`: short, unique across every task, a qualified name as the apiserver requires. */
const finalizer = (i: number, j: number): string => (i * 10_000 + j).toString(36);

function task(name: string, i: number, finalizers: number, query: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, finalizers: Array.from({ length: finalizers }, (_, j) => finalizer(i, j)) },
    spec: {
      target: { kind: 'Deployment', name: `missing-${i}` },
      trigger: { query, threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

test(`${OVER} AITasks of ${OVER_FINALIZERS} short finalizers and ${UNDER} just under the bound, made while the operator is down: it starts under the memory limit, ready, and alice's task is evaluated`, async (t) => {
  const m = stage.mallory;
  const heapLimit = stage.heapLimitMiB * 2 ** 20;
  assert.deepEqual(ledgerMisfits({ ...SHIPPED, heapLimitBytes: heapLimit }), [], 'the ledger fits this heap');
  const bounds = ledgerAt({ ...SHIPPED, heapLimitBytes: heapLimit }).lines.find(
    (l) => l.resource === 'aitasks',
  );
  assert.ok(bounds !== undefined);

  await stage.stopOperator();
  const trim = trimCustomObject([APPROVE_ANNOTATION]);
  let underCharge = 0;
  let overCharge = Infinity;
  let overJson = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < OVER + UNDER) {
        const i = next++;
        const over = i < OVER;
        const made = await m.tasks.create(
          m.namespace,
          over
            ? task(`over-${i}`, i, OVER_FINALIZERS, 'vector(0)')
            : task(`under-${i}`, i, UNDER_FINALIZERS, QUERY),
        );
        const charge = entryCharge(trim(made), { sharedKeys: TASK_KEYS });
        if (over) {
          overCharge = Math.min(overCharge, charge);
          overJson = Math.max(overJson, Buffer.byteLength(JSON.stringify(trim(made))));
        } else underCharge = Math.max(underCharge, charge);
      }
    }),
  );
  t.diagnostic(
    `each over task: ${overJson} bytes of JSON trimmed, charged ${overCharge}; each under task charged ${underCharge}; mallory's share ${bounds.maxNamespaceCharge}`,
  );
  assert.ok(overJson < MAX_OBJECT_CHARGE, 'the over tasks are within the old JSON bound');
  assert.ok(overCharge > MAX_OBJECT_CHARGE && underCharge < MAX_OBJECT_CHARGE - 8192);
  assert.ok(UNDER * underCharge > bounds.maxNamespaceCharge, 'the under tasks pass her share');

  // Ready, in the cgroup of the shipped limit: an OOM kill or a start that never gets ready throws.
  await stage.startOperator();
  const op = stage.operator;
  const refused = (reason: string): Promise<number> =>
    op.metric('aiops_cache_objects_refused_total', { resource: 'aitasks', reason });
  await eventually(
    `the ${OVER} tasks past the bound to be refused`,
    async () => ((await refused('TooLarge')) >= OVER ? true : undefined),
    120_000,
  );
  await eventually("mallory's share to be full", async () =>
    (await refused('CacheFull')) >= 1 ? true : undefined,
  );
  const cached = await op.metric('aiops_cache_objects', { resource: 'aitasks' });
  const charged = await op.metric('aiops_cache_bytes', { resource: 'aitasks' });
  const rss = await op.metric('process_resident_memory_bytes');
  const heap = await op.metric('nodejs_heap_size_used_bytes');
  t.diagnostic(
    `cached ${cached} AITasks charged ${charged} bytes; RSS ${Math.round(rss / 2 ** 20)} MiB, heap used ${Math.round(heap / 2 ** 20)} MiB of ${stage.heapLimitMiB}`,
  );
  // Alice's one task beside mallory's, each of hers charged at least as created: no more than her share holds.
  assert.ok(cached - 1 <= Math.floor(bounds.maxNamespaceCharge / underCharge), `${cached} cached`);
  assert.ok(cached > 1, 'some of the tasks under the bound are cached');
  assert.ok(charged <= bounds.maxCacheCharge, `${charged} charged`);

  const lines = op.logs.filter(
    (l) => l['resource'] === 'aitasks' && l['msg'] === 'object too large to cache; ignored until it shrinks',
  );
  const perKey = new Map<unknown, number>();
  for (const l of lines) perKey.set(l['key'], (perKey.get(l['key']) ?? 0) + 1);
  assert.equal(perKey.size, OVER, 'each refused task is logged');
  assert.ok(
    [...perKey.values()].every((n) => n === 1),
    'once',
  );
  await undisturbed(60_000);
});
