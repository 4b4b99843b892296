import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../api/schema/v2.ts';
import { checkApproval, type LiveDeployment, type LiveWorkload } from './approval-plan.ts';

const pending: v2.DecisionRecord = {
  id: 'd1',
  action: 'ScaleUp',
  source: 'rules',
  reason: 'threshold > 0.8 breached: ScaleUp 2 → 3',
  executed: false,
  blockedBy: 'AwaitingApproval',
  at: '2026-01-01T00:00:00Z',
  generation: 3,
  target: { namespace: 'prod', name: 'web', uid: 'uid-web' },
  effect: { fromReplicas: 2, replicas: 3 },
};
const task = (
  over: {
    decision?: v2.DecisionRecord | null;
    generation?: number;
    target?: string;
    kind?: v2.TargetKind;
  } = {},
): v2.AITask => ({
  apiVersion: 'aiops.example.com/v2',
  kind: 'AITask',
  metadata: { name: 'web-cpu', namespace: 'prod', generation: over.generation ?? 3 },
  spec: {
    target: { kind: over.kind ?? 'Deployment', name: over.target ?? 'web' },
    trigger: { threshold: 0.8 },
    remediation: { action: 'ScaleUp' },
    approval: 'Manual',
  },
  status:
    over.decision === null
      ? { phase: 'Monitoring' }
      : { phase: 'AwaitingApproval', pendingDecision: over.decision ?? pending },
});
const web = (uid = 'uid-web', replicas = 2): LiveDeployment => ({
  metadata: { name: 'web', namespace: 'prod', uid },
  spec: { replicas },
});

void test('approve: what it shows and when it refuses (table)', () => {
  const sts = (uid = 'uid-web', replicas = 2): LiveWorkload => ({
    metadata: { name: 'web', namespace: 'prod', uid, generation: 1 },
    spec: { replicas, updateStrategy: { type: 'RollingUpdate' } },
  });
  const cases: [string, v2.AITask, LiveWorkload | undefined, string | undefined, RegExp | undefined][] = [
    ['the reviewed decision, unchanged', task(), web(), 'd1', undefined],
    ['shown without --id', task(), web(), undefined, undefined],
    [
      'nothing waits',
      task({ decision: null }),
      web(),
      'd1',
      /no decision waiting for approval \(phase Monitoring\)/,
    ],
    ['another decision waits', task(), web(), 'd0', /is d1 \(ScaleUp 2 → 3\), not d0/],
    [
      'target switched',
      task({ target: 'other', generation: 4 }),
      web(),
      'd1',
      /changed from Deployment prod\/web to prod\/other/,
    ],
    ['spec changed', task({ generation: 4 }), web(), 'd1', /generation 3 to 4/],
    ['Deployment gone', task(), undefined, 'd1', /Deployment prod\/web does not exist/],
    ['Deployment replaced', task(), web('uid-new'), 'd1', /replaced .*UID uid-web → uid-new/],
    ['replicas moved', task(), web('uid-web', 5), 'd1', /has 5 replicas now, decision d1 scales from 2/],
    ['a StatefulSet, unchanged', task({ kind: 'StatefulSet' }), sts(), 'd1', undefined],
    [
      'a StatefulSet gone',
      task({ kind: 'StatefulSet' }),
      undefined,
      'd1',
      /^StatefulSet prod\/web does not exist/,
    ],
    [
      'a StatefulSet replaced',
      task({ kind: 'StatefulSet' }),
      sts('uid-new'),
      'd1',
      /^StatefulSet prod\/web was replaced .*UID uid-web → uid-new/,
    ],
    [
      "a StatefulSet's replicas moved",
      task({ kind: 'StatefulSet' }),
      sts('uid-web', 4),
      'd1',
      /^StatefulSet prod\/web has 4 replicas now/,
    ],
    [
      'the kind switched',
      task({ kind: 'StatefulSet', generation: 4 }),
      sts('uid-sts'),
      'd1',
      /generation 3 to 4/,
    ],
    [
      'decision of an older operator',
      task({
        decision: {
          id: 'd1',
          action: 'ScaleUp',
          source: 'rules',
          reason: 'r',
          at: pending.at,
          blockedBy: 'AwaitingApproval',
        },
      }),
      web(),
      'd1',
      /records no generation or target/,
    ],
  ];
  for (const [name, t, d, wanted, refusal] of cases) {
    const got = checkApproval(t, d, wanted);
    if (refusal === undefined) assert.equal(got.refusal, undefined, name);
    else assert.match(got.refusal ?? '', refusal, name);
  }
});

void test('approve shows action, Deployment with its UID, replicas, and how a pod or node is chosen', () => {
  assert.deepEqual(checkApproval(task(), web(), 'd1').plan, {
    name: 'web-cpu',
    namespace: 'prod',
    id: 'd1',
    action: 'ScaleUp',
    generation: 3,
    target: { kind: 'Deployment', namespace: 'prod', name: 'web', uid: 'uid-web' },
    replicas: { from: 2, to: 3 },
    reason: pending.reason,
  });
  const restart = checkApproval(
    task({ decision: { ...pending, action: 'RestartPod', effect: {} } }),
    web(),
    'd1',
  );
  assert.match(
    restart.plan?.pod ?? '',
    /an unhealthy pod of Deployment prod\/web, chosen when the operator executes/,
  );
  const cordon = checkApproval(
    task({ decision: { ...pending, action: 'CordonNode', effect: { pod: 'web-1', node: 'n1' } } }),
    web(),
    'd1',
  );
  assert.equal(cordon.plan?.pod, 'web-1');
  assert.equal(cordon.plan.node, 'n1');
  const stsRestart = checkApproval(
    task({ kind: 'StatefulSet', decision: { ...pending, action: 'RestartPod', effect: {} } }),
    { metadata: { uid: 'uid-web' }, spec: { replicas: 2 } },
    'd1',
  );
  assert.equal(stsRestart.plan?.target.kind, 'StatefulSet');
  assert.match(stsRestart.plan.pod ?? '', /an unhealthy pod of StatefulSet prod\/web/);
});

void test('approve on a kind read through /scale: bound to the UID its Scale carries, 0 replicas when omitted', () => {
  const shardTask = (decision: v2.DecisionRecord = pending): v2.AITask => {
    const t = task({ decision });
    return {
      ...t,
      spec: { ...t.spec, target: { apiVersion: 'test.aiops.example.com/v1', kind: 'Shard', name: 'web' } },
    };
  };
  const scale = (uid: string, replicas?: number): LiveWorkload => ({
    metadata: { name: 'web', namespace: 'prod', uid },
    spec: replicas === undefined ? {} : { replicas },
    status: { replicas: replicas ?? 0, selector: 'app=web' },
  });
  const ok = checkApproval(shardTask(), scale('uid-web', 2), 'd1');
  assert.equal(ok.refusal, undefined);
  assert.deepEqual(ok.plan?.target, {
    apiVersion: 'test.aiops.example.com/v1',
    kind: 'Shard',
    namespace: 'prod',
    name: 'web',
    uid: 'uid-web',
  });
  assert.match(
    checkApproval(shardTask(), scale('uid-new', 2), 'd1').refusal ?? '',
    /^Shard\.test\.aiops\.example\.com prod\/web was replaced .*UID uid-web → uid-new/,
  );
  assert.match(
    checkApproval(shardTask(), scale('uid-web'), 'd1').refusal ?? '',
    /^Shard\.test\.aiops\.example\.com prod\/web has 0 replicas now, decision d1 scales from 2/,
  );
  assert.match(
    checkApproval(shardTask(), undefined, 'd1').refusal ?? '',
    /^Shard\.test\.aiops\.example\.com prod\/web does not exist/,
  );
  const fromZero = { ...pending, effect: { fromReplicas: 0, replicas: 1 } };
  assert.equal(checkApproval(shardTask(fromZero), scale('uid-web'), 'd1').refusal, undefined);
});
