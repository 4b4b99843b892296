// Attack on the cache handlers' fan-out across namespaces: mallory's AITasks name alice's
// Deployment `app` (the one alice's bystander task watches), and mallory toggles each of them
// over and under the cache's 64 KiB object limit (MAX_CACHED_OBJECT_BYTES) by writing and
// removing a 70 KiB approval annotation, the one annotation the cache keeps. Each time a task
// grows past the limit the cache drops it as deleted, and a deleted task's going may pass its
// target to another task, so the others on that target are reconciled again: alice's task
// among them. That work is charged to mallory's namespace bucket (the namespace of the object
// that changed), so alice's task is evaluated at its own interval plus what mallory's bucket
// pays for, however fast mallory toggles. Played with --allow-cross-namespace, the one
// configuration where mallory's tasks may act on alice's Deployment and so count for its
// ownership (without it they are CrossNamespaceRefused and their going queues nothing of
// alice's), and with the namespace bucket at 1/s after a burst of 5, so the bound is tight
// enough that unpaced fan-out would show. Counted by Prometheus itself: only alice's task
// queries it (mallory's are DuplicateTarget: an older task owns `app`, so they never query).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { MAX_CACHED_OBJECT_BYTES } from '../../operator/runtime/trim.ts';
import { eventually } from '../support/operator.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

/** Mallory's namespace bucket: event-triggered reconciles per second, and the burst before it. */
const QPS = 1;
const BURST = 5;

const { stage, undisturbed } = useStage({
  args: [
    '--allow-cross-namespace',
    `--namespace-reconcile-qps=${QPS}`,
    `--namespace-reconcile-burst=${BURST}`,
  ],
});

/** Mallory's tasks on alice's Deployment, each toggled in a loop of its own. */
const TASKS = ['cross0', 'cross1', 'cross2', 'cross3'];
/** Times each task is grown past the limit and shrunk back. */
const TOGGLES = 40;
/** An approval annotation that alone takes the trimmed task past the cache's limit. */
const BLOB = 'x'.repeat(MAX_CACHED_OBJECT_BYTES + 6 * 1024);
/** The interval of alice's bystander task (stage.ts loadTask's default), in seconds. */
const ALICE_INTERVAL_S = 10;

/** Prometheus' own count of /api/v1/query requests it answered, every code, from its /metrics. */
async function queriesAnswered(): Promise<number> {
  const text = await (await fetch(`${stage.prometheus.url}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(
    /^prometheus_http_requests_total\{code="\d+",handler="\/api\/v1\/query"\} (\S+)$/gm,
  ))
    total += Number(m[1]);
  return total;
}

test("mallory's tasks on alice's Deployment toggled over the cache limit re-evaluate alice's task only at mallory's own pace", async (t) => {
  const m = stage.mallory;
  for (const name of TASKS)
    await m.tasks.create(
      m.namespace,
      loadTask(
        name,
        { action: 'Noop' },
        {
          target: { kind: 'Deployment', name: 'app', namespace: stage.alice.namespace },
          trigger: { query: `max(${LOAD}{deployment="app"})`, threshold: 1000 },
        },
      ),
    );
  for (const name of TASKS)
    await eventually(`${name} to be DuplicateTarget (alice's older task owns app)`, async () => {
      const task = await m.tasks.get(m.namespace, name);
      return findCondition(task.status?.conditions, 'Stalled')?.reason === 'DuplicateTarget'
        ? true
        : undefined;
    });

  const refused = (): Promise<number> =>
    stage.operator.metric('aiops_cache_objects_refused_total', { resource: 'aitasks' });
  const [queriesBefore, refusedBefore] = [await queriesAnswered(), await refused()];
  const started = Date.now();
  await Promise.all(
    TASKS.map(async (name) => {
      for (let i = 0; i < TOGGLES; i++) {
        await m.tasks.patch(m.namespace, name, { metadata: { annotations: { [APPROVE_ANNOTATION]: BLOB } } });
        await m.tasks.patch(m.namespace, name, { metadata: { annotations: { [APPROVE_ANNOTATION]: null } } });
      }
    }),
  );
  const toggles = TASKS.length * TOGGLES;
  await eventually(
    `the operator to refuse each of the ${toggles} oversized versions`,
    async () => ((await refused()) >= refusedBefore + toggles ? true : undefined),
    120_000,
  );
  // Alice's own change (one evaluation of hers) is observed at once: her bucket is her own.
  await undisturbed();
  const seconds = (Date.now() - started) / 1000;
  const queries = (await queriesAnswered()) - queriesBefore;
  // Alice's interval, her own change, and every token mallory's bucket had over the window.
  const bound = Math.floor(seconds / ALICE_INTERVAL_S) + 1 + 1 + BURST + QPS * seconds;
  t.diagnostic(
    `${toggles} toggles of mallory's tasks in ${seconds.toFixed(1)} s: alice's task queried Prometheus ${queries} times (bound ${bound.toFixed(0)})`,
  );
  assert.ok(
    toggles > 2 * bound,
    `the attack made ${toggles} deletions, too few against the bound ${bound.toFixed(0)} to show unpaced fan-out`,
  );
  assert.ok(
    queries <= bound,
    `alice's task was evaluated ${queries} times in ${seconds.toFixed(1)} s, over ${bound.toFixed(0)}: mallory's deletions reached it past her own bucket`,
  );
  const watch = await stage.alice.tasks.get(stage.alice.namespace, 'watch');
  assert.notEqual(
    findCondition(watch.status?.conditions, 'Stalled')?.reason,
    'DuplicateTarget',
    "alice's older task still owns app",
  );
  await undisturbed();
});
