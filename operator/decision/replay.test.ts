import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { replay, type ReplayInput, type Sample } from './replay.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const MIN = 60_000;

/** One sample every 15 s from T0 for `minutes`, `value(minute)` each. */
function samples(minutes: number, value: (minute: number) => number): Sample[] {
  return Array.from({ length: minutes * 4 }, (_, i) => ({ at: T0 + i * 15_000, value: value(i / 4) }));
}

function spec(over: Partial<v2.Spec> = {}, remediation: Partial<v2.Spec['remediation']> = {}): v2.Spec {
  return {
    target: { kind: 'Deployment', name: 'web' },
    intervalSeconds: 60,
    trigger: { threshold: 80, forSeconds: 120 },
    remediation: {
      action: 'ScaleUp',
      cooldownSeconds: 600,
      maxAttempts: 3,
      scale: { step: 1, minReplicas: 1, maxReplicas: 5 },
      ...remediation,
    },
    ...over,
  };
}

function run(s: v2.Spec, data: Sample[], extra: Partial<ReplayInput> = {}) {
  return replay({
    task: { metadata: { name: 'web-load', namespace: 'demo', generation: 1 }, spec: s },
    samples: data,
    from: T0,
    to: T0 + 180 * MIN,
    replicas: 2,
    ...extra,
  });
}

/** Breaches at minutes 30–39 and 120–129 (each shorter than the cooldown), healthy otherwise. */
const planted = samples(180, (m) => ((m >= 30 && m < 40) || (m >= 120 && m < 130) ? 95 : 40));

test('replay: a breach acts once it holds for forSeconds, then cools down; the next breach acts again', () => {
  const r = run(spec(), planted);
  assert.deepEqual(
    r.actions.map((a) => [(a.at - T0) / MIN, 'replicas' in a.plan ? a.plan.replicas : undefined]),
    [
      [32, 3],
      [122, 4],
    ],
  );
  assert.deepEqual(r.summary.actions, { ScaleUp: 2 });
  assert.equal(r.summary.firstAction, T0 + 32 * MIN);
  assert.equal(r.summary.lastAction, T0 + 122 * MIN);
  assert.deepEqual(r.summary.replicas, { start: 2, end: 4 });
  assert.equal(r.summary.evaluations, 183, 'one a minute, and once more after each scale');
  assert.equal(r.summary.failedAt, undefined);
  assert.deepEqual(
    r.changes.map((c) => [
      (c.at - T0) / MIN,
      c.phase,
      c.decision.kind,
      c.decision.blockedBy ?? '',
      c.replicas,
    ]),
    [
      [0, 'Monitoring', 'healthy', '', 2],
      [30, 'Monitoring', 'breachPending', '', 2],
      [32, 'Healing', 'act', '', 3],
      [32, 'Healing', 'blocked', 'Cooldown', 3],
      [40, 'Healed', 'healthy', '', 3],
      [120, 'Monitoring', 'breachPending', '', 3],
      [122, 'Healing', 'act', '', 4],
      [122, 'Healing', 'blocked', 'Cooldown', 4],
      [130, 'Healed', 'healthy', '', 4],
    ],
  );
});

test('replay: an endless breach stops at maxAttempts, in phase Failed', () => {
  const r = run(
    spec({}, { cooldownSeconds: 300, maxAttempts: 2 }),
    samples(180, (m) => (m >= 10 ? 95 : 40)),
  );
  assert.deepEqual(
    r.actions.map((a) => (a.at - T0) / MIN),
    [12, 17],
  );
  assert.equal(r.summary.failedAt, T0 + 17 * MIN, 'the second scale reconciles again at once: stalled');
});

test('replay: the scale bounds stop scaling; a scale reconciles again at once (cooldown 0)', () => {
  const r = run(spec({}, { cooldownSeconds: 0, maxAttempts: 10 }), planted);
  assert.deepEqual(
    r.actions.map((a) => [(a.at - T0) / MIN, 'replicas' in a.plan ? a.plan.replicas : 0]),
    [
      [32, 3],
      [32, 4],
      [32, 5],
    ],
  );
  assert.ok(r.changes.some((c) => c.decision.blockedBy === 'AtMaxReplicas'));
});

test('replay: approval Manual, dryRun and paused act never; LLM mode says the advisor would be asked', () => {
  const manual = run(spec({ approval: 'Manual' }), planted);
  assert.equal(manual.actions.length, 0);
  assert.ok(manual.summary.awaitingApproval > 0);
  assert.ok(
    manual.changes.some((c) => c.phase === 'AwaitingApproval' && c.decision.would === 'waitForApproval'),
  );
  const dry = run(spec({ dryRun: true }), planted);
  assert.equal(dry.actions.length, 0);
  assert.ok(dry.changes.some((c) => c.decision.would === 'runDry' && c.decision.plan === 'ScaleUp 2 → 3'));
  const paused = run(spec({ paused: true }), planted);
  assert.equal(paused.actions.length, 0);
  assert.deepEqual(
    paused.changes.map((c) => [c.phase, c.value]),
    [['Paused', undefined]],
  );
  const llm = run(spec({ decision: { mode: 'LLM', llm: { endpoint: 'http://llm.example/v1' } } }), planted);
  assert.deepEqual(
    llm.actions.map((a) => a.askAdvisor),
    [true, true],
  );
  assert.ok(llm.changes.some((c) => c.decision.would === 'askAdvisor'));
});

test('replay: a sample answers for the lookback; after it, NoData and no action', () => {
  const r = run(
    spec(),
    samples(20, () => 95),
    { to: T0 + 60 * MIN },
  );
  assert.deepEqual(
    r.actions.map((a) => (a.at - T0) / MIN),
    [2, 12, 22],
    'the last sample (19:45) answers for 5 min',
  );
  assert.equal(r.summary.noData, 36, 'minutes 25 to 60');
  assert.equal(r.changes.at(-1)?.decision.kind, 'metricUnavailable');
  assert.equal(r.changes.at(-1)?.value, undefined);
  const nan = run(
    spec(),
    samples(20, (m) => (m < 10 ? 40 : NaN)),
    { to: T0 + 15 * MIN },
  );
  assert.equal(nan.summary.noData, 6, 'minutes 10 to 15: a sample that is not a finite number is no data');
});

test('replay: the timeline keeps maxChanges changes and counts the rest', () => {
  const flapping = samples(180, (m) => (Math.floor(m) % 2 === 0 ? 95 : 40));
  const all = run(spec(), flapping);
  const capped = run(spec(), flapping, { maxChanges: 5 });
  assert.equal(capped.changes.length, 5);
  assert.equal(capped.omitted, all.changes.length - 5);
  assert.deepEqual(capped.changes, all.changes.slice(0, 5));
});

test('replay: a spec that breaks its schema rules is refused, nothing replayed', () => {
  const r = run(spec({}, { scale: { minReplicas: 5, maxReplicas: 2 } }), planted);
  assert.match(r.refused ?? '', /^the spec breaks its schema's rules: spec/);
  assert.equal(r.summary.evaluations, 0);
});
