// Attack on manual approval (issue 22): an admin reviews the decision an AITask waits on
// (ScaleUp of Deployment web) and approves its id; in the same moment the tenant points
// spec.target.name at another Deployment. Before, the approved id executed against the other
// Deployment. Now the approval is void (an ApprovalIgnored Event says the target changed),
// neither Deployment is scaled, and the decision is made again for the new target under a new
// id, waiting for a new approval. The operator runs under the shipped RBAC (operatorFor).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { freshNamespace } from '../support/cluster.ts';
import { eventually } from '../support/operator.ts';
import { aitask, clients, metricsForFile, operatorFor, taskEvents } from '../support/remediation.ts';
import { deployment } from '../support/workloads.ts';

const metrics = metricsForFile();

void test('an approval does not follow a target switched after the review', async (t) => {
  const ns = await freshNamespace('attack-approval', (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 2));
  await c.deployments.create(ns, deployment('other', 2));
  await metrics.set(ns, 5);
  await c.tasks.create(
    ns,
    aitask(
      'manual',
      'web',
      ns,
      { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 3600 },
      { approval: 'Manual' },
    ),
  );
  await operatorFor(ns, metrics.prometheus.url, t);
  const until = (what: string, check: (o: v2.AITask) => boolean): Promise<v2.AITask> =>
    eventually(
      what,
      async () => {
        const o = await c.tasks.get(ns, 'manual');
        return check(o) ? o : undefined;
      },
      60_000,
    );
  const reviewed = await until(
    'a decision waiting for approval',
    (o) => o.status?.phase === 'AwaitingApproval',
  );
  const shown = reviewed.status?.pendingDecision;
  assert.ok(shown);
  const web = await c.deployments.get(ns, 'web');
  assert.deepEqual(shown.target, { namespace: ns, name: 'web', uid: web.metadata.uid });
  assert.equal(shown.generation, 1);

  await c.tasks.patch(ns, 'manual', {
    metadata: { annotations: { [APPROVE_ANNOTATION]: shown.id } },
    spec: { target: { name: 'other' } },
  });
  const remade = await until(
    'the approval consumed and a new decision waiting for the new target',
    (o) =>
      o.metadata.annotations?.[APPROVE_ANNOTATION] === undefined &&
      o.status?.pendingDecision?.target?.name === 'other' &&
      o.status.pendingDecision.blockedBy === 'AwaitingApproval',
  );
  assert.notEqual(remade.status?.pendingDecision?.id, shown.id);
  assert.equal(remade.status?.pendingDecision?.generation, 2);
  const ignored = await eventually('the ApprovalIgnored Event', async () =>
    (await taskEvents(ns, 'manual')).find((e) => e.reason === 'ApprovalIgnored'),
  );
  assert.match(ignored.note, new RegExp(`target changed from Deployment ${ns}/web to ${ns}/other`));
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal((await c.deployments.get(ns, 'other')).spec?.replicas, 2, 'the other Deployment was scaled');
  assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 2, 'the reviewed Deployment was scaled');
  assert.ok(
    !(await taskEvents(ns, 'manual')).some((e) => e.reason === 'ThresholdBreached'),
    'a decision to act was made',
  );
});
