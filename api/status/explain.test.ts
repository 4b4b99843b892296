import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Condition } from '../schema/common.ts';
import type * as v2 from '../schema/v2.ts';
import { explainPhase } from './explain.ts';

const T0 = '2026-01-01T12:00:00Z';

function cond(type: string, status: 'True' | 'False', reason: string, message = reason): Condition {
  return { type, status, reason, message, lastTransitionTime: T0 };
}

function task(over: {
  meta?: Partial<v2.AITask['metadata']>;
  spec?: Partial<v2.Spec>;
  status?: v2.Status;
}): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'web', namespace: 'prod', generation: 2, ...over.meta },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8, forSeconds: 120 },
      remediation: { action: 'ScaleUp', cooldownSeconds: 600 },
      ...over.spec,
    },
    ...(over.status ? { status: over.status } : {}),
  };
}

const ready = cond('Ready', 'True', 'Healthy', 'metric 0.4 below threshold 0.8');

void test('explainPhase gives kstatus, causes, next step and remedies for each situation', () => {
  const cases: {
    name: string;
    input: v2.AITask;
    kstatus: string;
    reasons: string[];
    next: RegExp;
    nextAt?: string;
    remedy?: RegExp;
  }[] = [
    {
      name: 'healthy',
      input: task({ status: { phase: 'Monitoring', observedGeneration: 2, conditions: [ready] } }),
      kstatus: 'Current',
      reasons: ['Healthy'],
      next: /evaluates the metric again within 60s/,
    },
    {
      name: 'never reconciled',
      input: task({}),
      kstatus: 'InProgress',
      reasons: ['NotObserved'],
      next: /as soon as it sees it/,
      remedy: /leader Lease/,
    },
    {
      name: 'generation lag names both numbers',
      input: task({
        meta: { generation: 5 },
        status: { phase: 'Monitoring', observedGeneration: 3, conditions: [ready] },
      }),
      kstatus: 'InProgress',
      reasons: ['GenerationLag'],
      next: /reconciles generation 5/,
      remedy: /generation-diff web -n prod/,
    },
    {
      name: 'terminating with nodes owed',
      input: task({
        meta: { deletionTimestamp: T0, finalizers: ['aiops.example.com/finalizer'] },
        status: { phase: 'Healed', observedGeneration: 2, cordonedNodes: ['n1'] },
      }),
      kstatus: 'Terminating',
      reasons: ['Terminating'],
      next: /uncordons n1 and removes aiops.example.com\/finalizer/,
      remedy: /force-finalize web -n prod/,
    },
    {
      name: 'target missing',
      input: task({
        status: {
          phase: 'Pending',
          observedGeneration: 2,
          conditions: [cond('TargetFound', 'False', 'TargetNotFound', 'deployment prod/web not found')],
        },
      }),
      kstatus: 'Current',
      reasons: ['TargetNotFound'],
      next: /within 60s/,
      remedy: /create Deployment prod\/web/,
    },
    {
      name: 'a StatefulSet target missing is named by its kind',
      input: task({
        spec: { target: { kind: 'StatefulSet', name: 'redis', namespace: 'cache' } },
        status: {
          phase: 'Pending',
          observedGeneration: 2,
          conditions: [cond('TargetFound', 'False', 'TargetNotFound', 'statefulset cache/redis not found')],
        },
      }),
      kstatus: 'Current',
      reasons: ['TargetNotFound'],
      next: /within 60s/,
      remedy:
        /create StatefulSet cache\/redis, or point spec.target at an existing Deployment or StatefulSet/,
    },
    {
      name: 'metric unavailable',
      input: task({
        spec: { intervalSeconds: 30 },
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          conditions: [cond('MetricsAvailable', 'False', 'NoData')],
        },
      }),
      kstatus: 'Current',
      reasons: ['NoData'],
      next: /within 30s/,
      remedy: /exactly one sample/,
    },
    {
      name: 'cooldown until T',
      input: task({
        status: {
          phase: 'Healed',
          observedGeneration: 2,
          lastExecutionTime: T0,
          conditions: [cond('RemediationAllowed', 'False', 'Cooldown')],
        },
      }),
      kstatus: 'Current',
      reasons: ['Cooldown'],
      next: /cooldown ends at 2026-01-01T12:10:00Z/,
      nextAt: '2026-01-01T12:10:00Z',
    },
    {
      name: 'cap reached',
      input: task({
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          conditions: [cond('RemediationAllowed', 'False', 'ConcurrencyCapReached')],
        },
      }),
      kstatus: 'Current',
      reasons: ['ConcurrencyCapReached'],
      next: /within 60s/,
      remedy: /operator-wide cap/,
    },
    {
      name: 'awaiting approval from the pending decision alone',
      input: task({
        spec: { approval: 'Manual' },
        status: {
          phase: 'AwaitingApproval',
          observedGeneration: 2,
          pendingDecision: { id: 'd1', action: 'ScaleUp', source: 'rules', reason: 'cpu 0.9 > 0.8', at: T0 },
        },
      }),
      kstatus: 'Current',
      reasons: ['AwaitingApproval'],
      next: /once it is approved/,
      remedy: /"approval":"Auto"/,
    },
    {
      name: 'LLM circuit open',
      input: task({
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          conditions: [ready, cond('LLMAvailable', 'False', 'LLMCircuitOpen')],
        },
      }),
      kstatus: 'Current',
      reasons: ['LLMCircuitOpen'],
      next: /within 60s/,
      remedy: /fall back to rules/,
    },
    {
      name: 'LLM key refused over plain http',
      input: task({
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          conditions: [ready, cond('LLMAvailable', 'False', 'LLMInsecureEndpoint')],
        },
      }),
      kstatus: 'Current',
      reasons: ['LLMInsecureEndpoint'],
      next: /within 60s/,
      remedy: /https .*loopback/,
    },
    {
      name: 'LLM answer too large',
      input: task({
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          conditions: [ready, cond('LLMAvailable', 'False', 'LLMResponseTooLarge')],
        },
      }),
      kstatus: 'Current',
      reasons: ['LLMResponseTooLarge'],
      next: /within 60s/,
      remedy: /more than 1 MiB/,
    },
    {
      name: 'RBAC forbidden',
      input: task({
        status: {
          phase: 'Failed',
          observedGeneration: 2,
          conditions: [cond('Ready', 'False', 'Forbidden', 'cannot patch deployments/scale')],
        },
      }),
      kstatus: 'InProgress',
      reasons: ['Forbidden'],
      next: /within 60s/,
      remedy: /auth can-i/,
    },
    {
      name: 'stalled at max attempts',
      input: task({
        status: {
          phase: 'Failed',
          observedGeneration: 2,
          attempts: 3,
          conditions: [cond('Stalled', 'True', 'MaxAttemptsReached')],
        },
      }),
      kstatus: 'Failed',
      reasons: ['MaxAttemptsReached'],
      next: /nothing happens until the target recovers/,
      remedy: /maxAttempts/,
    },
    ...(
      [
        ['Forbidden', /grant the operator's ServiceAccount/],
        ['Invalid', /rejected a request of the operator as invalid/],
        ['KindNotServed', /does not serve/],
      ] as const
    ).map(([reason, remedy]) => ({
      name: `stalled on a request refused for good (${reason})`,
      input: task({
        status: {
          phase: 'Failed',
          observedGeneration: 2,
          conditions: [cond('Stalled', 'True', reason), cond('Ready', 'False', reason)],
        },
      }),
      kstatus: 'Failed',
      reasons: [reason],
      next: /tries again 10 min after the failure, or as soon as the spec changes/,
      remedy,
    })),
    {
      name: 'paused from spec before the operator says so',
      input: task({
        spec: { paused: true },
        status: { phase: 'Monitoring', observedGeneration: 2, conditions: [ready] },
      }),
      kstatus: 'Current',
      reasons: ['Paused'],
      next: /until spec.paused is false/,
      remedy: /"paused":false/,
    },
    {
      name: 'one cause per reason when several conditions repeat it',
      input: task({
        status: {
          phase: 'Failed',
          observedGeneration: 2,
          conditions: [
            cond('TargetFound', 'False', 'TargetNotFound'),
            cond('Ready', 'False', 'TargetNotFound'),
            cond('Stalled', 'True', 'TargetNotFound'),
          ],
        },
      }),
      kstatus: 'Failed',
      reasons: ['TargetNotFound'],
      next: /nothing happens until/,
      remedy: /create Deployment prod\/web/,
    },
    {
      name: 'breach pending until forSeconds passed',
      input: task({
        status: {
          phase: 'Monitoring',
          observedGeneration: 2,
          breachSince: T0,
          conditions: [cond('Ready', 'False', 'BreachPending')],
        },
      }),
      kstatus: 'InProgress',
      reasons: ['BreachPending'],
      next: /still holds at 2026-01-01T12:02:00Z, the operator decides on ScaleUp/,
      nextAt: '2026-01-01T12:02:00Z',
    },
  ];
  for (const c of cases) {
    const e = explainPhase(c.input);
    assert.equal(e.kstatus.status, c.kstatus, c.name);
    assert.deepEqual(
      e.causes.map((x) => x.reason),
      c.reasons,
      c.name,
    );
    assert.match(e.next, c.next, c.name);
    assert.equal(e.nextAt, c.nextAt, c.name);
    if (c.remedy)
      assert.ok(
        e.remedies.some((r) => c.remedy?.test(r)),
        `${c.name}: ${e.remedies.join(' | ')}`,
      );
  }
});

void test('explainPhase reports phase, generations and the last transition', () => {
  const later = {
    ...ready,
    type: 'TargetFound',
    status: 'True' as const,
    lastTransitionTime: '2026-01-01T13:00:00Z',
  };
  const e = explainPhase(
    task({ status: { phase: 'Healed', observedGeneration: 2, conditions: [ready, later] } }),
  );
  assert.equal(e.phase, 'Healed');
  assert.equal(e.generation, 2);
  assert.equal(e.observedGeneration, 2);
  assert.equal(e.since, '2026-01-01T13:00:00Z');
  assert.equal(explainPhase(task({})).phase, 'Pending');
});
