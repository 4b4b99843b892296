import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { applyApproval, choiceChanged } from './approval.ts';
import type { Verdict } from './decide.ts';
import { evaluate } from './evaluate.ts';
import { sameDecision } from './status-parts.ts';

const waiting: v2.DecisionRecord = {
  id: 'd1',
  action: 'ScaleUp',
  source: 'rules',
  reason: 'ScaleUp 2 → 3 waits for manual approval',
  executed: false,
  blockedBy: 'AwaitingApproval',
  at: '2026-01-01T00:00:00Z',
  generation: 4,
  target: { namespace: 'ns', name: 'web', uid: 'uid-web' },
  effect: { fromReplicas: 2, replicas: 3 },
};
const awaitingVerdict = (from = 2, replicas = 3): Verdict => ({
  kind: 'blocked',
  value: 5,
  since: '2026-01-01T00:00:00Z',
  blockedBy: 'AwaitingApproval',
  message: 'waits',
  plan: { action: 'ScaleUp', from, replicas },
});
const inFlight: v2.DecisionRecord = {
  id: waiting.id,
  action: waiting.action,
  source: waiting.source,
  reason: waiting.reason,
  at: waiting.at,
};
const spec = (target: string): v2.Spec => ({
  target: { kind: 'Deployment', name: target },
  trigger: { threshold: 0.8 },
  remediation: { action: 'ScaleUp' },
  approval: 'Manual',
});
const task = (
  approve: string | undefined,
  pending: v2.DecisionRecord | null = waiting,
  { generation = 4, target = 'web' } = {},
) => ({
  metadata: {
    name: 't',
    namespace: 'ns',
    generation,
    ...(approve !== undefined ? { annotations: { [APPROVE_ANNOTATION]: approve } } : {}),
  },
  spec: spec(target),
  status: pending ? { pendingDecision: pending } : {},
});
const unbound: v2.DecisionRecord = {
  id: waiting.id,
  action: waiting.action,
  source: waiting.source,
  reason: waiting.reason,
  blockedBy: 'AwaitingApproval',
  at: waiting.at,
  effect: { fromReplicas: 2, replicas: 3 },
};

void test('approval: table', () => {
  const cases: [string, ReturnType<typeof task>, Verdict, string | undefined, string | RegExp][] = [
    ['no annotation', task(undefined), awaitingVerdict(), undefined, 'blocked'],
    ['approved', task('d1'), awaitingVerdict(), 'uid-web', 'act'],
    ['approved, target UID not observed', task('d1'), awaitingVerdict(), undefined, 'act'],
    ['stale id', task('d0'), awaitingVerdict(), 'uid-web', /waiting for approval is d1/],
    ['nothing waiting', task('d1', null), awaitingVerdict(), 'uid-web', /no decision is waiting/],
    [
      'in-flight decision is not approvable',
      task('d1', inFlight),
      awaitingVerdict(),
      'uid-web',
      /no decision/,
    ],
    ['recovered meanwhile', task('d1'), { kind: 'healthy', value: 0.1 }, 'uid-web', /no longer call/],
    ['replicas changed', task('d1'), awaitingVerdict(3, 4), 'uid-web', /decision changed/],
    [
      'target switched after approval',
      task('d1', waiting, { generation: 5, target: 'other' }),
      awaitingVerdict(),
      'uid-other',
      /target changed from Deployment ns\/web to ns\/other.*waits for a new approval/,
    ],
    [
      'spec changed after approval',
      task('d1', waiting, { generation: 5 }),
      awaitingVerdict(),
      'uid-web',
      /generation 4 to 5/,
    ],
    [
      'Deployment deleted and recreated under the same name',
      task('d1'),
      awaitingVerdict(),
      'uid-new',
      /was replaced \(UID uid-web → uid-new\)/,
    ],
    [
      'decision recorded before binding',
      task('d1', unbound),
      awaitingVerdict(),
      'uid-web',
      /no generation or target/,
    ],
  ];
  for (const [name, t, verdict, uid, want] of cases) {
    const r = applyApproval(t, verdict, uid);
    if (typeof want === 'string') {
      assert.equal(r.ignored, undefined, `${name}: ${r.ignored?.note ?? ''}`);
      assert.equal(r.verdict.kind, want, name);
    } else {
      assert.equal(r.ignored?.reason, 'ApprovalIgnored', name);
      assert.match(r.ignored.note, want, name);
      assert.equal(r.verdict.kind, verdict.kind, `${name}: verdict kept`);
    }
    assert.equal(r.consume, name !== 'no annotation', `${name}: consume`);
    if (want === 'act') assert.equal(r.approvedId, 'd1');
  }
});

void test('sameDecision binds generation, target (UID when both know it), action and effect', () => {
  const b = (over: Partial<v2.DecisionRecord>): v2.DecisionRecord => ({ ...waiting, id: 'other', ...over });
  const cases: [string, v2.DecisionRecord | undefined, boolean][] = [
    ['identical but id and time', b({ at: '2026-01-01T00:05:00Z' }), true],
    ['UID unknown on one side', b({ target: { namespace: 'ns', name: 'web' } }), true],
    ['nothing waiting', undefined, false],
    ['other generation', b({ generation: 5 }), false],
    ['other target name', b({ target: { namespace: 'ns', name: 'other', uid: 'uid-web' } }), false],
    ['other target namespace', b({ target: { namespace: 'ns2', name: 'web', uid: 'uid-web' } }), false],
    ['other target UID', b({ target: { namespace: 'ns', name: 'web', uid: 'uid-2' } }), false],
    ['other action', b({ action: 'ScaleDown' }), false],
    ['other replicas', b({ effect: { fromReplicas: 2, replicas: 4 } }), false],
    ['other pod', b({ effect: { fromReplicas: 2, replicas: 3, pod: 'web-1' } }), false],
    ['other node', b({ effect: { fromReplicas: 2, replicas: 3, node: 'n1' } }), false],
  ];
  for (const [name, other, want] of cases) {
    assert.equal(sameDecision(other, waiting), want, name);
    if (other !== undefined) assert.equal(sameDecision(other, waiting), sameDecision(waiting, other), name);
  }
  assert.equal(sameDecision({ ...unbound, id: 'x' }, unbound), false, 'unbound records never match');
});

void test('a waiting decision is kept while its binding holds and made again when the target changes', () => {
  const at = Date.parse('2026-01-01T00:10:00Z');
  const base = task(undefined);
  const kept = evaluate(base, awaitingVerdict(), at, 'new-id', 60_000, { targetUID: 'uid-web' });
  assert.equal(kept.status.pendingDecision?.id, 'd1');
  const switched = task(undefined, waiting, { generation: 5, target: 'other' });
  const remade = evaluate(switched, awaitingVerdict(), at, 'new-id', 60_000, { targetUID: 'uid-other' });
  assert.equal(remade.status.pendingDecision?.id, 'new-id');
  assert.deepEqual(remade.status.pendingDecision.target, {
    namespace: 'ns',
    name: 'other',
    uid: 'uid-other',
  });
  assert.equal(remade.status.pendingDecision.generation, 5);
  assert.equal(remade.status.pendingDecision.blockedBy, 'AwaitingApproval');
});

test('choiceChanged: the pod (and its UID) or node recorded while waiting binds the approval; none recorded binds none', () => {
  const pod = { pod: 'web-1', podUID: 'u1' };
  assert.equal(choiceChanged(pod, pod), undefined);
  assert.equal(
    choiceChanged(pod, { pod: 'web-2', podUID: 'u2' }),
    'the pod chosen changed from web-1 to web-2',
  );
  assert.equal(
    choiceChanged(pod, { pod: 'web-1', podUID: 'u9' }),
    'the pod chosen changed from web-1 to web-1',
    'a pod recreated under the same name is another pod',
  );
  assert.equal(
    choiceChanged({ ...pod, node: 'n1' }, { ...pod, node: 'n2' }),
    'the node chosen changed from n1 to n2',
  );
  assert.equal(choiceChanged(undefined, pod), undefined);
  assert.equal(choiceChanged({ replicas: 3, fromReplicas: 2 }, pod), undefined);
});
