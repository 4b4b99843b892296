// Attack on the cache handlers' fan-out across namespaces, where the admin allows
// cross-namespace targets (--allow-cross-namespace): mallory's tasks on alice's Deployment
// then count for its ownership, so each one's going (a toggle over the cache's object limit
// drops it as deleted: cross-namespace-toggles.ts) re-evaluates the other tasks on it, alice's
// among them, since the owner may pass to one. That work is charged to mallory's namespace
// bucket (the namespace of the object that changed), so alice's task is evaluated at its own
// interval plus what mallory's bucket pays for, however fast mallory toggles. The bucket is
// set to 1/s after a burst of 5 so the bound is tight enough that unpaced fan-out would show.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { ALICE_INTERVAL_S, toggleOnAlicesTarget } from './cross-namespace-toggles.ts';
import { useStage } from './use-stage.ts';

/** Every namespace's bucket: event-triggered reconciles per second, and the burst before it. */
const QPS = 1;
const BURST = 5;

const { stage, undisturbed } = useStage({
  args: [
    '--allow-cross-namespace',
    `--namespace-reconcile-qps=${QPS}`,
    `--namespace-reconcile-burst=${BURST}`,
  ],
});

test("mallory's tasks on alice's Deployment toggled over the cache limit re-evaluate alice's task only at mallory's own pace", async (t) => {
  // Alice's bystander task is older, so it owns `app` and mallory's are DuplicateTarget.
  const { toggles, seconds, queries } = await toggleOnAlicesTarget(stage, 'DuplicateTarget', undisturbed);
  // Alice's interval, her own change (one more if a status write of hers met it and was
  // retried), and every token mallory's bucket had over the window.
  const bound = Math.floor(seconds / ALICE_INTERVAL_S) + 1 + 2 + BURST + QPS * seconds;
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
