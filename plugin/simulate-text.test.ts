import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../api/schema/v2.ts';
import { replay } from '../operator/decision/replay.ts';
import { palette } from './format.ts';
import { decisionText, REPLAY_NOTE, renderSimulation, simulationView } from './simulate-text.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const spec: v2.Spec = {
  target: { kind: 'Deployment', name: 'web' },
  intervalSeconds: 60,
  trigger: { threshold: 0.8, forSeconds: 120 },
  remediation: { action: 'ScaleUp', cooldownSeconds: 600, maxAttempts: 3, scale: { maxReplicas: 4 } },
};
const task = { metadata: { name: 'web-load', namespace: 'demo' }, spec };
const samples = Array.from({ length: 720 }, (_, i) => ({
  at: T0 + i * 15_000,
  value: i >= 120 && i < 160 ? 0.95 : 0.2,
}));

function view(maxChanges?: number) {
  const window = { from: T0, to: T0 + 3 * 3_600_000 };
  const r = replay({
    task,
    samples,
    ...window,
    replicas: 2,
    ...(maxChanges !== undefined ? { maxChanges } : {}),
  });
  return simulationView(
    {
      task,
      from: 'cluster',
      window,
      stepMs: 15_000,
      prometheus: 'http://prom',
      query: 'q',
      samples: samples.length,
    },
    r,
  );
}

test('simulationView: the document -o json prints: times in RFC 3339, the summary, the changes, the note', () => {
  const v = view();
  assert.equal(v.window.from, '2026-03-01T00:00:00Z');
  assert.deepEqual(v.summary.actions, { ScaleUp: 1 });
  assert.equal(v.summary.firstAction, '2026-03-01T00:32:00Z');
  assert.equal(v.summary.failedAt, undefined);
  assert.deepEqual(v.changes[2], {
    time: '2026-03-01T00:32:00Z',
    value: 0.95,
    phase: 'Healing',
    decision: 'ScaleUp 2 → 3',
    verdict: { kind: 'act', plan: 'ScaleUp 2 → 3' },
    replicas: 3,
  });
  assert.equal(v.note, REPLAY_NOTE);
});

test('renderSimulation: summary, the note, the timeline, and how many changes were left out', () => {
  const text = renderSimulation(view(3), spec, palette(false));
  assert.match(
    text,
    /^AITask demo\/web-load replayed over 2026-03-01T00:00:00Z → 2026-03-01T03:00:00Z \(3h, 720 samples every 15s\)$/m,
  );
  assert.match(
    text,
    /^Rules: +> 0\.8 for 120s, every 60s; ScaleUp by 1 within 1\.\.4 from 2 replicas; cooldown 600s; at most 3 attempts$/m,
  );
  assert.match(
    text,
    /^Would do: +1 ScaleUp \(first 2026-03-01T00:32:00Z, last 2026-03-01T00:32:00Z\); replicas 2 → 3$/m,
  );
  assert.match(text, /^Failed: +never$/m);
  assert.ok(text.includes(REPLAY_NOTE));
  assert.match(text, /^TIME +VALUE +PHASE +DECISION +REPLICAS$/m);
  assert.match(text, /^2026-03-01T00:32:00Z +0\.95 +Healing +ScaleUp 2 → 3 +3$/m);
  assert.match(text, /^… 2 more changes not shown \(the timeline keeps the first 3\)$/m);
  assert.ok(!text.includes('\u001b['), 'no colour with colour off');
});

test('decisionText: each decision in words', () => {
  const table: [Parameters<typeof decisionText>[0], string][] = [
    [{ kind: 'act', plan: 'ScaleUp 2 → 3' }, 'ScaleUp 2 → 3'],
    [{ kind: 'act', plan: 'RestartPod', would: 'askAdvisor' }, 'would ask the advisor (rules: RestartPod)'],
    [
      { kind: 'blocked', blockedBy: 'AwaitingApproval', plan: 'ScaleUp 2 → 3', would: 'waitForApproval' },
      'would wait for approval: ScaleUp 2 → 3',
    ],
    [{ kind: 'blocked', blockedBy: 'DryRun', plan: 'Noop', would: 'runDry' }, 'dry run: Noop'],
    [{ kind: 'blocked', blockedBy: 'Cooldown' }, 'blocked: Cooldown'],
    [{ kind: 'stalled' }, 'maxAttempts reached'],
    [{ kind: 'metricUnavailable' }, 'no data'],
  ];
  for (const [d, want] of table) assert.equal(decisionText(d), want);
});
