// Integration test of `kubectl aiops approve` through the real kubectl: it sets the approval
// annotation to the id of the decision waiting in status.pendingDecision, refuses (exit 3)
// when nothing waits or --id names another decision, and documents itself in --help.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { APPROVE_ANNOTATION } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import { freshNamespace, testAITasks, testKubeconfig } from '../test/support/cluster.ts';
import { buildAndInstall, kubectl, type KubectlResult } from './kubectl-run.ts';

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
  effect: { fromReplicas: 2, replicas: 3 },
};

void describe('kubectl aiops approve', () => {
  test('approves the waiting decision; refuses with exit 3 when nothing waits or --id differs', async (t) => {
    const ns = await freshNamespace('plugin-approve', (fn) => t.after(fn));
    const tasks = await testAITasks('v2');
    const make = async (name: string, status: v2.Status): Promise<void> => {
      const created = await tasks.create(ns, {
        apiVersion: 'aiops.example.com/v2',
        kind: 'AITask',
        metadata: { name },
        spec,
      });
      await tasks.replaceStatus({ ...created, status });
    };
    await make('waits', { phase: 'AwaitingApproval', observedGeneration: 1, pendingDecision: waiting });
    await make('idle', { phase: 'Monitoring', observedGeneration: 1 });

    const none = await run(['approve', 'idle', '-n', ns]);
    assert.equal(none.code, 3, none.stderr);
    assert.match(none.stderr, /no decision waiting for approval \(phase Monitoring\); nothing to approve/);
    assert.equal((await tasks.get(ns, 'idle')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const other = await run(['approve', 'waits', '-n', ns, '--id', 'some-other-id']);
    assert.equal(other.code, 3, other.stderr);
    assert.match(other.stderr, new RegExp(`is ${waiting.id} \\(ScaleUp 2 → 3\\), not some-other-id`));
    assert.equal((await tasks.get(ns, 'waits')).metadata.annotations?.[APPROVE_ANNOTATION], undefined);

    const ok = await run(['approve', 'waits', '-n', ns, '--id', waiting.id]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`decision ${waiting.id} \\(ScaleUp 2 → 3\\) approved`));
    assert.equal((await tasks.get(ns, 'waits')).metadata.annotations?.[APPROVE_ANNOTATION], waiting.id);

    const json = await run(['approve', 'waits', '-n', ns, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { approved: v2.DecisionRecord }).approved.id, waiting.id);

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
