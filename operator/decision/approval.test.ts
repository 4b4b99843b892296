import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { applyApproval } from './approval.ts';
import type { Verdict } from './decide.ts';

const waiting: v2.DecisionRecord = {
  id: 'd1',
  action: 'ScaleUp',
  source: 'rules',
  reason: 'ScaleUp 2 → 3 waits for manual approval',
  executed: false,
  blockedBy: 'AwaitingApproval',
  at: '2026-01-01T00:00:00Z',
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
const task = (approve: string | undefined, pending: v2.DecisionRecord | null = waiting) => ({
  metadata: {
    name: 't',
    ...(approve !== undefined ? { annotations: { [APPROVE_ANNOTATION]: approve } } : {}),
  },
  status: pending ? { pendingDecision: pending } : {},
});

test('approval: table', () => {
  const cases: [string, ReturnType<typeof task>, Verdict, string][] = [
    ['no annotation', task(undefined), awaitingVerdict(), 'blocked'],
    ['approved', task('d1'), awaitingVerdict(), 'act'],
    ['stale id', task('d0'), awaitingVerdict(), 'ignored'],
    ['nothing waiting', task('d1', null), awaitingVerdict(), 'ignored'],
    ['in-flight decision is not approvable', task('d1', inFlight), awaitingVerdict(), 'ignored'],
    ['recovered meanwhile', task('d1'), { kind: 'healthy', value: 0.1 }, 'ignored'],
    ['decision changed', task('d1'), awaitingVerdict(3, 4), 'ignored'],
  ];
  for (const [name, t, verdict, want] of cases) {
    const r = applyApproval(t, verdict);
    const got = r.ignored ? 'ignored' : r.verdict.kind;
    assert.equal(got, want, name);
    assert.equal(r.consume, name !== 'no annotation', `${name}: consume`);
    if (want === 'act') assert.equal(r.approvedId, 'd1');
    if (want === 'ignored') assert.equal(r.ignored?.reason, 'ApprovalIgnored');
  }
});
