// Integration, two seed behaviours of an AITask going away, on the real apiserver with the
// operator under the shipped RBAC:
// - the reconcile of a key whose object is gone returns quietly: once the finalizer is
//   removed and the object deleted, the key is still reconciled (the delete event, and the
//   interval's requeue still pending), and each such reconcile ends as a success with no
//   requeue (controller_runtime_reconcile_total's result "success", not "requeue_after"),
//   no error, no retry, no Event, no error log, and no log line naming the key but the
//   finalizer's own;
// - the task's ControllerRevisions (its spec history, owned by it) are removed by the
//   cluster's garbage collector, not by the operator, which sends no DELETE at all.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REVISION_UID_LABEL, type ControllerRevision } from '../api/revisions.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { FINALIZER } from '../api/install.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import { aitask, clients, taskEvents } from '../test/support/remediation.ts';
import { Resources } from './runtime/kinds.ts';

type Clients = Awaited<ReturnType<typeof clients>>;

/** Waits until `ns/name` answers 404. */
async function gone(c: Clients, ns: string, name: string): Promise<void> {
  await eventually(`${name} to be gone`, async () =>
    c.tasks.get(ns, name).then(
      () => undefined,
      () => true,
    ),
  );
}

/** Starts an operator (no Prometheus: nothing here reads a metric) watching only `ns`, stopped when the test ends. */
async function operatorIn(
  ns: string,
  t: { after: (fn: () => Promise<void>) => void },
): Promise<OperatorProcess> {
  const op = await startOperatorProcess([`--namespace=${ns}`, '--zap-log-level=debug']);
  t.after(async () => {
    await op.stop();
  });
  return op;
}

test('the reconcile of a deleted AITask returns quietly: no error, no requeue, no Event, no error log', async (t) => {
  const ns = await freshNamespace('seed-gone', (fn) => t.after(fn));
  const c = await clients();
  const key = `${ns}/gone`;
  await c.tasks.create(ns, aitask('gone', 'web', ns, { action: 'Noop' }, { intervalSeconds: 10 }));
  const op = await operatorIn(ns, t);
  await eventually('gone evaluated, its Event recorded', async () => {
    const o = await c.tasks.get(ns, 'gone');
    const evaluated =
      o.metadata.finalizers?.includes(FINALIZER) === true && o.status?.observedGeneration === 1;
    return evaluated && (await taskEvents(ns, 'gone')).some((e) => e.reason === 'TargetNotFound')
      ? true
      : undefined;
  });
  const success = () => op.metric('controller_runtime_reconcile_total', { result: 'success' });
  const before = {
    success: await success(),
    errors: await op.metric('controller_runtime_reconcile_errors_total'),
    retries: await op.metric('workqueue_retries_total'),
    events: (await taskEvents(ns, 'gone')).length,
    logs: op.logs.length,
  };

  await c.tasks.delete(ns, 'gone');
  await gone(c, ns, 'gone');
  const finalized = () =>
    op.logs.slice(before.logs).filter((l) => l.key === key && l.msg === 'finalizer removed').length;
  // Every success since the delete is the finalizer's run (at most one can succeed: a second
  // would find the object gone and fail) or a reconcile of the key after its object was gone;
  // a reconcile of an object still there ends in "requeue_after", a failed one in "error".
  const afterDelete = await eventually('a reconcile of the key after its object was gone', async () => {
    const n = (await success()) - before.success;
    return n >= 2 ? n : undefined;
  });
  await eventually("the finalizer's log line", () => (finalized() >= 1 ? true : undefined));
  assert.equal(finalized(), 1, 'the finalizer ran once');
  assert.ok(afterDelete - finalized() >= 1);
  assert.equal(await op.metric('controller_runtime_reconcile_errors_total'), before.errors, 'no error');
  assert.equal(await op.metric('workqueue_retries_total'), before.retries, 'no retry');
  assert.equal((await taskEvents(ns, 'gone')).length, before.events, 'no Event');
  const errors = op.logs.slice(before.logs).filter((l) => l.level === 'error' || l.level === 'dpanic');
  assert.deepEqual(errors, [], 'no error logged');
  assert.deepEqual(
    op.logs
      .slice(before.logs)
      .filter((l) => l.key === key)
      .map((l) => l.msg),
    ['finalizer removed'],
    'the key is logged once, by the finalizer, and never after its object was gone',
  );
});

test("an AITask's ControllerRevisions are garbage-collected by the cluster when it goes", async (t) => {
  const ns = await freshNamespace('seed-gc', (fn) => t.after(fn));
  const c = await clients();
  const revisions = new ResourceClient<ControllerRevision>(c.transport, Resources.controllerRevisions);
  const created = await c.tasks.create(ns, aitask('history', 'web', ns, { action: 'Noop' }));
  const uid = created.metadata.uid ?? '';
  const op = await operatorIn(ns, t);
  const generation = async (g: number) =>
    eventually(`observedGeneration ${g}`, async () =>
      (await c.tasks.get(ns, 'history')).status?.observedGeneration === g ? true : undefined,
    );
  await generation(1);
  await c.tasks.patch(ns, 'history', { spec: { trigger: { threshold: 2 } } });
  await generation(2);
  await c.tasks.patch(ns, 'history', { spec: { trigger: { threshold: 3 } } });
  await generation(3);
  const owned = async () =>
    (await revisions.list(ns, { labelSelector: `${REVISION_UID_LABEL}=${uid}` })).items;
  const history = await owned();
  assert.deepEqual(history.map((r) => r.revision).sort(), [1, 2, 3]);
  for (const r of history)
    assert.deepEqual(
      r.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['AITask', 'history', uid, true]],
      'owned by the AITask',
    );

  await c.tasks.delete(ns, 'history');
  await gone(c, ns, 'history');
  await eventually(
    'the garbage collector to delete the revisions',
    async () => ((await owned()).length === 0 ? true : undefined),
    120_000,
  );
  assert.equal(
    await op.metric('rest_client_requests_total', { method: 'DELETE' }),
    0,
    'the operator deleted nothing: the garbage collector did',
  );
});
