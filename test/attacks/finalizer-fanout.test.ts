// Attack on the finalizer's fan-out: status.cordonedNodes is written by
// anyone who may write aitasks/status, so mallory fills it with made-up node names on four
// of her tasks (about a thousand each, as many as the cache still holds: 4,076 in all) and
// deletes them. The finalizer looks up only the nodes that
// carry the operator's own mark for each task, from the node view it shares with every
// reader: the apiserver answers no GET for a made-up name, and alice's spec change meanwhile
// is observed as promptly as ever. Played with mallory's own token against the operator
// under the CSV's RBAC and in a memory cgroup of its shipped limit.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORDONED_NODES_MAX_ITEMS } from '../../api/schema/common.ts';
import { FINALIZER } from '../../api/install.ts';
import { heapCharge } from '../../operator/runtime/heap-charge.ts';
import { MAX_OBJECT_CHARGE } from '../../operator/runtime/memory-ledger.ts';
import { TASK_KEYS } from '../../operator/task-cache-share.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
import { eventually } from '../support/operator.ts';
import { loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** Heap charge left for the rest of a task beside its made-up names, in bytes. */
const REST_OF_TASK = 16 * 1024;

/**
 * Made-up names per task: the 7,000, the CRD's CORDONED_NODES_MAX_ITEMS, or as many as
 * keep the task in the operator's cache (charged under MAX_OBJECT_CHARGE with REST_OF_TASK
 * left), whichever is least: past that the cache refuses the task and its finalizer is its
 * owner's to remove, so the finalizer's fan-out is measured at the largest status it reads.
 */
const NAMES = (() => {
  const cap = Math.min(7000, CORDONED_NODES_MAX_ITEMS);
  const names: string[] = [];
  const fits = (): boolean =>
    heapCharge({ status: { cordonedNodes: names } }, TASK_KEYS) <= MAX_OBJECT_CHARGE - REST_OF_TASK;
  while (names.length < cap && fits()) names.push(`n${names.length}`);
  return fits() ? names.length : names.length - 1;
})();

/** Node GETs the whole attack may cost: a handful (none is owed), not one per name. */
const MAX_NODE_GETS = 20;

test("thousands of made-up cordonedNodes across deleted tasks cost no node GET, and alice's change is observed promptly", async (t) => {
  const ns = stage.mallory.namespace;
  const tasks = ['fan0', 'fan1', 'fan2', 'fan3'];
  const madeUp = Array.from({ length: NAMES }, (_, i) => `n${i}`);
  for (const name of tasks) await stage.mallory.tasks.create(ns, loadTask(name, { action: 'Noop' }));
  for (const name of tasks) {
    await eventually(`${name} to carry the finalizer`, async () =>
      (await stage.mallory.tasks.get(ns, name)).metadata.finalizers?.includes(FINALIZER) === true
        ? true
        : undefined,
    );
    await stage.mallory.tasks.patchStatus(ns, name, { cordonedNodes: madeUp });
    await eventually(`${name}'s status to list ${NAMES} names`, async () =>
      (await stage.mallory.tasks.get(ns, name)).status?.cordonedNodes?.length === NAMES ? true : undefined,
    );
  }
  const gets = () => apiserverRequests(stage.admin, { resource: 'nodes', verb: 'GET' });
  const notFound = () => apiserverRequests(stage.admin, { resource: 'nodes', verb: 'GET', code: '404' });
  const [getsBefore, notFoundBefore] = [await gets(), await notFound()];

  for (const name of tasks) await stage.mallory.tasks.delete(ns, name);
  await undisturbed();
  for (const name of tasks)
    await eventually(
      `${name} to be finalized and gone`,
      () =>
        stage.mallory.tasks.get(ns, name).then(
          () => undefined,
          () => true,
        ),
      120_000,
    );

  const madeUpGets = (await notFound()) - notFoundBefore;
  const allGets = (await gets()) - getsBefore;
  t.diagnostic(
    `${allGets} node GETs (${madeUpGets} answered 404) for ${tasks.length} × ${NAMES} made-up names`,
  );
  assert.equal(
    madeUpGets,
    0,
    `the apiserver answered ${madeUpGets} node GETs with 404 (made-up names looked up)`,
  );
  assert.ok(
    allGets <= MAX_NODE_GETS,
    `${allGets} node GETs for ${tasks.length} deletions of ${NAMES} made-up names each (at most ${MAX_NODE_GETS})`,
  );
  await undisturbed();
});
