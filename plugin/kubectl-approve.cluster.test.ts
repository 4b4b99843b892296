// Integration test of `kubectl aiops approve` through the real kubectl: without --id it shows
// what the waiting decision would do (action, Deployment and its UID, replicas) and approves
// nothing; with the id it showed it sets the approval annotation; it refuses (exit 3) when
// nothing waits, --id names another decision, or the AITask's target changed since the
// decision was made; and it documents itself in --help.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { APPROVE_ANNOTATION } from '../api/install.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { deployment } from '../test/support/workloads.ts';
import type { LiveDeployment } from './approval-plan.ts';
import { Resources } from './kinds.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';

let PATH = '';
let KC = '';
const run = (args: readonly string[]): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC });

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

const spec: v2.Spec = {
  target: { kind: 'Deployment', name: 'web' },
  trigger: { threshold: 0.8 },
  remediation: { action: 'ScaleUp' },
  approval: 'Manual',
};

const waiting: v2.DecisionRecord = {
  id: '3f2c9a64-approve-test',
  action: 'ScaleUp',
  source: 'rules',
  reason: 'ScaleUp 2 → 3 waits for manual approval',
  executed: false,
  blockedBy: 'AwaitingApproval',
  at: '2026-01-01T00:00:00Z',
  generation: 1,
  effect: { fromReplicas: 2, replicas: 3 },
};

void describe('kubectl aiops approve', () => {
  test('shows the waiting decision, approves it only by --id, refuses with exit 3 when nothing waits, --id differs or the target changed', async (t) => {
    const ns = await freshNamespace('plugin-approve', (fn) => t.after(fn));
    const tasks = await testAITasks('v2');
    const web = await new ResourceClient<LiveDeployment>(await testTransport(), Resources.deployments).create(
      ns,
      deployment('web', 2),
    );
    const bound = { ...waiting, target: { namespace: ns, name: 'web' } };
    const make = async (name: string, status: v2.Status): Promise<void> => {
      const created = await tasks.create(ns, {
        apiVersion: 'aiops.example.com/v2',
        kind: 'AITask',
        metadata: { name },
        spec,
      });
      await tasks.replaceStatus({ ...created, status });
    };
    await make('waits', { phase: 'AwaitingApproval', observedGeneration: 1, pendingDecision: bound });
    await make('switched', { phase: 'AwaitingApproval', observedGeneration: 1, pendingDecision: bound });
    await tasks.patch(ns, 'switched', { spec: { target: { name: 'other' } } });
    await make('idle', { phase: 'Monitoring', observedGeneration: 1 });

    const none = await run(['approve', 'idle', '-n', ns]);
    assert.equal(none.code, 3, none.stderr);
    assert.match(none.stderr, /no decision waiting for approval \(phase Monitoring\); nothing to approve/);
    assert.equal((await tasks.get(ns, 'idle')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const other = await run(['approve', 'waits', '-n', ns, '--id', 'some-other-id']);
    assert.equal(other.code, 3, other.stderr);
    assert.match(other.stderr, new RegExp(`is ${waiting.id} \\(ScaleUp 2 → 3\\), not some-other-id`));
    assert.equal((await tasks.get(ns, 'waits')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const shown = await run(['approve', 'waits', '-n', ns]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`waits on decision ${waiting.id}:`));
    assert.match(shown.stdout, /Action: +ScaleUp\n/);
    assert.match(shown.stdout, new RegExp(`Deployment: +${ns}/web \\(uid ${web.metadata?.uid ?? '?'}\\)`));
    assert.match(shown.stdout, /Replicas: +2 → 3\n/);
    assert.match(shown.stdout, new RegExp(`Not approved.*\\n.*--id ${waiting.id}`));
    assert.equal((await tasks.get(ns, 'waits')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const switched = await run(['approve', 'switched', '-n', ns, '--id', waiting.id]);
    assert.equal(switched.code, 3, switched.stderr);
    assert.match(switched.stderr, new RegExp(`changed from Deployment ${ns}/web to ${ns}/other`));
    assert.equal((await tasks.get(ns, 'switched')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const ok = await run(['approve', 'waits', '-n', ns, '--id', waiting.id]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`Approved: the operator executes decision ${waiting.id} once`));
    assert.equal((await tasks.get(ns, 'waits')).metadata.annotations?.[APPROVE_ANNOTATION], waiting.id);

    const json = await run(['approve', 'waits', '-n', ns, '-o', 'json', '--id', waiting.id]);
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as {
      approved: boolean;
      decision: { id: string; target: { uid?: string } };
    };
    assert.equal(doc.approved, true);
    assert.equal(doc.decision.id, waiting.id);
    assert.equal(doc.decision.target.uid, web.metadata?.uid);

    const missing = await run(['approve', 'nosuch', '-n', ns]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /aitask "nosuch" not found/);
    assert.equal((await run(['approve'])).code, 2);
  });

  test('--help shows the examples', async () => {
    const help = await run(['approve', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /kubectl aiops approve web-cpu -n prod/);
    assert.match(help.stdout, /--id <decision>/);
  });
});
