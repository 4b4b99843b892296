// Attack on the cache handlers' fan-out across namespaces, as shipped (no
// --allow-cross-namespace): mallory's tasks name alice's Deployment and are refused
// (CrossNamespaceRefused), so they never count for its ownership, and their going (a toggle
// over the cache's object limit drops a task as deleted: cross-namespace-toggles.ts) changes
// nothing of alice's task: it queues nothing of alice's, and alice's task is evaluated at its
// own interval only, however fast mallory toggles.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALICE_INTERVAL_S, toggleOnAlicesTarget } from './cross-namespace-toggles.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

test("mallory's refused tasks on alice's Deployment toggled over the cache limit never re-evaluate alice's task", async (t) => {
  const { toggles, seconds, queries } = await toggleOnAlicesTarget(
    stage,
    'CrossNamespaceRefused',
    undisturbed,
  );
  // Alice's interval and her own change only (one more if a status write of hers met her
  // change and was retried).
  const bound = Math.floor(seconds / ALICE_INTERVAL_S) + 1 + 2;
  t.diagnostic(
    `${toggles} toggles of mallory's tasks in ${seconds.toFixed(1)} s: alice's task queried Prometheus ${queries} times (bound ${bound})`,
  );
  assert.ok(toggles > 2 * bound, `the attack made ${toggles} deletions, too few against the bound ${bound}`);
  assert.ok(
    queries <= bound,
    `alice's task was evaluated ${queries} times in ${seconds.toFixed(1)} s, over ${bound}: mallory's refused tasks' deletions reached it`,
  );
  await undisturbed();
});
