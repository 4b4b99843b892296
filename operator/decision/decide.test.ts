import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type * as v2 from '../../api/schema/v2.ts';
import { decide, isBreach, planAction, type Verdict } from './decide.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function task(
  spec: Partial<v2.Spec> = {},
  status: v2.Status = {},
  generation = 1,
): Pick<v2.AITask, 'metadata' | 'spec' | 'status'> {
  return {
    metadata: { name: 't', namespace: 'ns', generation },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8 },
      remediation: { action: 'ScaleUp', scale: { maxReplicas: 3 } },
      ...spec,
    },
    status: { observedGeneration: generation, ...status },
  };
}

const found = { found: true, replicas: 2 } as const;
const high = { ok: true, value: 0.9 } as const;

test('decide: table', () => {
  const cases: [string, string, Verdict][] = [
    ['paused wins', 'paused', decide(task({ paused: true }), found, high, NOW)],
    [
      'missing target',
      'targetMissing',
      decide(task(), { found: false, reason: 'TargetNotFound', message: 'gone' }, undefined, NOW),
    ],
    [
      'no metric',
      'metricUnavailable',
      decide(task(), found, { ok: false, reason: 'NoData', message: 'none' }, NOW),
    ],
    ['healthy', 'healthy', decide(task(), found, { ok: true, value: 0.5 }, NOW)],
    ['act', 'act', decide(task(), found, high, NOW)],
    [
      'hold forSeconds',
      'breachPending',
      decide(task({ trigger: { threshold: 0.8, forSeconds: 60 } }), found, high, NOW),
    ],
    [
      'held long enough',
      'act',
      decide(
        task({ trigger: { threshold: 0.8, forSeconds: 60 } }, { breachSince: '2026-01-01T00:08:00Z' }),
        found,
        high,
        NOW,
      ),
    ],
    ['max attempts', 'stalled', decide(task({}, { attempts: 3 }), found, high, NOW)],
    [
      'attempts reset by a new generation',
      'act',
      decide(task({}, { attempts: 3, observedGeneration: 1 }, 2), found, high, NOW),
    ],
    [
      'cooldown',
      'Cooldown',
      decide(task({}, { lastExecutionTime: '2026-01-01T00:09:00Z' }), found, high, NOW),
    ],
    [
      'cooldown over',
      'act',
      decide(
        task(
          { remediation: { action: 'ScaleUp', cooldownSeconds: 30 } },
          { lastExecutionTime: '2026-01-01T00:09:00Z' },
        ),
        found,
        high,
        NOW,
      ),
    ],
    ['at max', 'AtMaxReplicas', decide(task(), { found: true, replicas: 3 }, high, NOW)],
    ['dry run', 'DryRun', decide(task({ dryRun: true }), found, high, NOW)],
    ['manual approval', 'AwaitingApproval', decide(task({ approval: 'Manual' }), found, high, NOW)],
    [
      'LessThan',
      'act',
      decide(task({ trigger: { threshold: 5, operator: 'LessThan' } }), found, { ok: true, value: 1 }, NOW),
    ],
  ];
  for (const [name, want, got] of cases) {
    const kind = got.kind === 'blocked' ? got.blockedBy : got.kind;
    assert.equal(kind, want, name);
  }
});

test('decide: a RestartPod or CordonNode plan names the pod the metric names; a scale ignores it', () => {
  const named = { ok: true, value: 0.9, pod: 'web-abc-1' } as const;
  for (const action of ['RestartPod', 'CordonNode'] as const)
    assert.deepEqual(decide(task({ remediation: { action } }), found, named, NOW), {
      kind: 'act',
      value: 0.9,
      since: '2026-01-01T00:10:00Z',
      plan: { action, pod: 'web-abc-1' },
    });
  assert.deepEqual(decide(task(), found, named, NOW), {
    kind: 'act',
    value: 0.9,
    since: '2026-01-01T00:10:00Z',
    plan: { action: 'ScaleUp', from: 2, replicas: 3 },
  });
});

test('planAction: scale stays within min/max and moves by step', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 1, max: 40 }),
      fc.constantFrom('ScaleUp' as const, 'ScaleDown' as const),
      (replicas, step, minReplicas, span, action) => {
        const maxReplicas = minReplicas + span;
        const spec = task({ remediation: { action, scale: { step, minReplicas, maxReplicas } } }).spec;
        const plan = planAction(spec, replicas);
        if ('blockedBy' in plan) {
          assert.ok(action === 'ScaleUp' ? replicas >= maxReplicas : replicas <= minReplicas);
          return;
        }
        assert.ok('replicas' in plan);
        if (action === 'ScaleUp') assert.ok(plan.replicas > replicas && plan.replicas <= maxReplicas);
        else assert.ok(plan.replicas < replicas && plan.replicas >= minReplicas);
        assert.ok(Math.abs(plan.replicas - replicas) <= step);
      },
    ),
  );
});

test('isBreach: GreaterThan by default, strict comparison', () => {
  assert.equal(isBreach({ threshold: 1 }, 1), false);
  assert.equal(isBreach({ threshold: 1 }, 1.01), true);
  assert.equal(isBreach({ threshold: 1, operator: 'LessThan' }, 0.5), true);
});
