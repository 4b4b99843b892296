// The replay (decision/replay.ts) is the operator: for generated specs and metric series,
// the actions the replay lists are the actions the Reconciler runs when a fake clock and a
// fake Prometheus feed it the same series, with the work queue's timing (the next reconcile
// is the earliest requeue asked for; a scale's Deployment event reconciles again at once)
// and in-memory stand-ins for the apiserver, the action adapter and the advisor, which the
// replay assumes always succeed (and, for the advisor, always fall back to the rules).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { AITaskClient } from '../api/aitask-client.ts';
import * as v2 from '../api/schema/v2.ts';
import { createLogger } from '../lib/log.ts';
import { RemediationSlots } from './decision/caps.ts';
import { DEFAULTS, type ActionPlan, type MetricObservation } from './decision/decide.ts';
import { replay, type Sample } from './decision/replay.ts';
import type { Actions, Prepared } from './edges/actions.ts';
import type { EventRecorder } from './edges/events.ts';
import type { History } from './edges/history.ts';
import type { MetricReader } from './edges/prometheus.ts';
import type { Advisor } from './llm/advisor.ts';
import { Reconciler } from './reconcile.ts';
import type { Informer } from './runtime/informer.ts';
import type { Deployment } from './runtime/kinds.ts';
import type { Telemetry } from './telemetry.ts';

const FROM = Date.parse('2026-03-01T00:00:00Z');
const LOOKBACK_MS = 300_000;

/** A run's action: when, and what. */
interface Ran {
  readonly at: number;
  readonly plan: ActionPlan;
}

/** The last sample at or before `at` less old than the lookback, as an instant query answers. */
function instant(samples: readonly Sample[], at: number): MetricObservation {
  const seen = samples.filter((s) => s.at <= at && at - s.at < LOOKBACK_MS);
  const last = seen[seen.length - 1];
  return last !== undefined
    ? { ok: true, value: last.value }
    : { ok: false, reason: 'NoData', message: 'none' };
}

/** The Reconciler over `spec` from FROM to `to`, fed `samples`; the actions it ran. */
async function operatorRun(
  spec: v2.Spec,
  samples: readonly Sample[],
  to: number,
  replicas: number,
): Promise<Ran[]> {
  const key = 'tenant/task';
  let now = FROM;
  let stored: v2.AITask = {
    apiVersion: v2.API_VERSION,
    kind: 'AITask',
    metadata: { name: 'task', namespace: 'tenant', uid: 'task-uid', generation: 1, resourceVersion: '1' },
    spec,
  };
  let deployment: Deployment = {
    metadata: { name: spec.target.name, namespace: 'tenant', uid: 'deploy-uid' },
    spec: { replicas },
  };
  const ran: Ran[] = [];
  const store = (task: v2.AITask): Promise<v2.AITask> => {
    stored = JSON.parse(JSON.stringify(task)) as v2.AITask;
    return Promise.resolve(stored);
  };
  const tasks = {
    addFinalizer: (_ns: string, _name: string, finalizer: string) =>
      store({ ...stored, metadata: { ...stored.metadata, finalizers: [finalizer] } }),
    get: () => Promise.resolve(stored),
    replaceStatus: (task: v2.AITask) => store({ ...stored, ...(task.status ? { status: task.status } : {}) }),
    patch: () => Promise.resolve(stored),
  } as unknown as AITaskClient;
  const prometheus: MetricReader = { query: () => Promise.resolve(instant(samples, now)) };
  const actions = {
    prepare: (plan: ActionPlan): Promise<Prepared> => {
      const owner = { uid: 'task-uid', namespace: 'tenant' };
      if (plan.action === 'RestartPod') return Promise.resolve({ action: 'RestartPod', pod: 'pod-a' });
      if (plan.action === 'CordonNode')
        return Promise.resolve({ action: 'CordonNode', pod: 'pod-a', node: 'node-a', owner });
      return Promise.resolve('replicas' in plan ? plan : { action: 'Noop' });
    },
    run: (p: Prepared) => {
      const plan: ActionPlan = p.action === 'ScaleUp' || p.action === 'ScaleDown' ? p : { action: p.action };
      ran.push({ at: now, plan });
      if ('replicas' in p) deployment = { ...deployment, spec: { replicas: p.replicas } };
      return Promise.resolve({ executed: true, message: 'done' });
    },
  } as unknown as Actions;
  const none = { inc: () => undefined };
  const reconciler = new Reconciler({
    tasks,
    taskCache: { get: () => stored, byIndex: () => [key] } as unknown as Informer<v2.AITask>,
    targets: { read: () => Promise.resolve({ workload: deployment }) },
    prometheus,
    history: { record: () => Promise.resolve() } as unknown as History,
    telemetry: { refusals: none, actions: none, statusWrites: none } as unknown as Telemetry,
    log: createLogger('replay-test', { level: 'error', write: () => undefined }),
    defaultQuery: 'up',
    allowCrossNamespace: false,
    confineQueries: false,
    actions,
    advisor: {
      advise: () => Promise.resolve({ kind: 'fallback', reason: 'LLMTimeout', message: 'not asked' }),
      forget: () => undefined,
    } as unknown as Advisor,
    slots: new RemediationSlots(0, 0),
    events: {
      record: () => Promise.resolve(),
      recentReasons: () => Promise.resolve([]),
    } as unknown as EventRecorder,
    defaults: DEFAULTS,
    now: () => now,
  });
  const replicasNow = (): number | undefined => deployment.spec?.replicas;
  // The work queue: one timer, the earliest requeue wins; a changed Deployment reconciles at once.
  for (let due = FROM; due <= to;) {
    now = due;
    let before = replicasNow();
    let result = await reconciler.reconcile(key);
    due = now + (result.requeueAfterMs ?? Infinity);
    while (replicasNow() !== before) {
      before = replicasNow();
      result = await reconciler.reconcile(key);
      due = Math.min(due, now + (result.requeueAfterMs ?? Infinity));
    }
  }
  return ran;
}

const spec: fc.Arbitrary<v2.Spec> = fc
  .record({
    action: fc.constantFrom<v2.Action>('ScaleUp', 'ScaleDown', 'RestartPod', 'CordonNode', 'Noop'),
    operator: fc.constantFrom<'GreaterThan' | 'LessThan'>('GreaterThan', 'LessThan'),
    forSeconds: fc.constantFrom(0, 30, 45, 90, 300),
    cooldownSeconds: fc.constantFrom(0, 60, 100, 600),
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    intervalSeconds: fc.constantFrom(10, 30, 60),
    step: fc.integer({ min: 1, max: 3 }),
    min: fc.integer({ min: 1, max: 3 }),
    span: fc.integer({ min: 0, max: 4 }),
    approval: fc.constantFrom<'Auto' | 'Manual' | undefined>(undefined, undefined, 'Auto', 'Manual'),
    dryRun: fc.constantFrom(undefined, undefined, false, true),
    paused: fc.constantFrom(undefined, undefined, undefined, false, true),
    llm: fc.boolean(),
  })
  .map((g) => ({
    target: { kind: 'Deployment' as const, name: 'web' },
    intervalSeconds: g.intervalSeconds,
    trigger: { threshold: 50, operator: g.operator, forSeconds: g.forSeconds },
    remediation: {
      action: g.action,
      cooldownSeconds: g.cooldownSeconds,
      maxAttempts: g.maxAttempts,
      scale: { step: g.step, minReplicas: g.min, maxReplicas: g.min + g.span },
    },
    ...(g.approval !== undefined ? { approval: g.approval } : {}),
    ...(g.dryRun !== undefined ? { dryRun: g.dryRun } : {}),
    ...(g.paused !== undefined ? { paused: g.paused } : {}),
    ...(g.llm ? { decision: { mode: 'LLM' as const, llm: { endpoint: 'http://llm.example/v1' } } } : {}),
  }));

/**
 * Samples every `stepS` seconds in runs of one value (so breaches hold), a run of `null` being
 * a gap (longer than the lookback: NoData).
 */
const series = fc
  .record({
    stepS: fc.constantFrom(15, 30, 45),
    runs: fc.array(
      fc.record({
        value: fc.option(fc.integer({ min: 0, max: 100 }), { freq: 8 }),
        length: fc.integer({ min: 1, max: 40 }),
      }),
      { minLength: 1, maxLength: 16 },
    ),
  })
  .map(({ stepS, runs }) =>
    runs
      .flatMap(({ value, length }) => Array.from({ length }, () => value))
      .flatMap((v, i) => (v === null ? [] : [{ at: FROM + i * stepS * 1000, value: v }])),
  );

test('replay: the actions are the ones the Reconciler runs on the same series under a fake clock', async () => {
  await fc.assert(
    fc.asyncProperty(spec, series, fc.integer({ min: 1, max: 6 }), async (s, samples, replicas) => {
      const to = FROM + 2 * 3600_000;
      const replayed = replay({
        task: { metadata: { name: 'task', namespace: 'tenant', generation: 1 }, spec: s },
        samples,
        from: FROM,
        to,
        replicas,
      });
      const ran = await operatorRun(s, samples, to, replicas);
      assert.deepEqual(
        replayed.actions.map(({ at, plan }) => ({ at, plan })),
        ran,
      );
    }),
    { numRuns: 300 },
  );
});
