import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type * as v2 from '../api/schema/v2.ts';
import { explainPhase } from '../api/status/explain.ts';
import { renderDescribe } from './describe-text.ts';
import { describeView, type EventRow } from './describe-view.ts';
import type { TargetHealth } from './target-health.ts';
import { renderExplanation, renderExplanationList } from './explain-text.ts';
import { palette } from './format.ts';

const NOW = new Date('2026-01-10T00:00:00Z');
const AT = '2026-01-09T23:00:00Z';

/** Text a tenant (or a compromised LLM) can put into a field: controls, escapes, bidi, separators. */
const nasty = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '\u001b',
      '\u0007',
      '\n',
      '\t',
      '\r',
      '\u0085',
      '\u009b',
      '\u202e',
      '\u2066',
      '\u2028',
      '[',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 30,
});

/** A task, health and Events with `s` in every field a tenant, an Event or the LLM writes. */
function world(s: (i: number) => string): {
  task: v2.AITask;
  health: TargetHealth;
  statefulSet: TargetHealth;
  events: EventRow[];
} {
  const decision = (i: number): v2.DecisionRecord => ({
    id: s(i),
    action: 'ScaleUp',
    source: 'llm',
    reason: s(i + 1),
    at: AT,
    blockedBy: s(i + 2),
    llm: { model: s(i + 3), latencyMs: 5 },
    effect: { pod: s(i + 4), node: s(i + 5) },
  });
  const task: v2.AITask = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 't', namespace: 'ns', generation: 2, finalizers: [s(0)], creationTimestamp: AT },
    spec: {
      target: { kind: 'Deployment', name: s(1), namespace: s(2) },
      trigger: { query: s(3), threshold: 0.8 },
      remediation: { action: 'ScaleUp' },
      decision: { mode: 'LLM', llm: { endpoint: s(4), model: s(5) } },
    },
    status: {
      phase: 'AwaitingApproval',
      message: s(6),
      observedGeneration: 1,
      cordonedNodes: [s(7)],
      conditions: [
        { type: s(8), status: 'False', reason: s(9), message: s(10), lastTransitionTime: AT },
        { type: 'Stalled', status: 'True', reason: s(11), message: s(12), lastTransitionTime: AT },
      ],
      lastDecision: decision(13),
      pendingDecision: decision(20),
    },
  };
  const events: EventRow[] = [
    { type: s(30), reason: s(31), message: s(32), count: 1, lastSeen: AT, from: s(33) },
  ];
  const statefulSet: TargetHealth = {
    found: true,
    kind: 'StatefulSet',
    desired: 2,
    ready: 1,
    current: 1,
    updated: 1,
    available: 1,
    currentRevision: s(35),
    updateRevision: s(36),
    rollout: { state: 'progressing', message: s(37) },
  };
  return { task, health: { found: false, error: s(34) }, statefulSet, events };
}

const lines = (text: string): number => text.split('\n').length;
const HIDDEN_BUT_NEWLINE = /[^\P{Cc}\n]|[\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

void test('describe and explain-phase text: tenant text adds no control, line or column separator', () => {
  fc.assert(
    fc.property(fc.array(nasty, { minLength: 40, maxLength: 40 }), (strings) => {
      const tenant = world((i) => strings[i] ?? '');
      const plain = world(() => 'x');
      for (const wide of [false, true]) {
        for (const health of ['health', 'statefulSet'] as const) {
          const render = (w: typeof tenant): string =>
            renderDescribe(describeView(w.task, w[health], w.events), NOW, palette(false), wide);
          const out = render(tenant);
          assert.ok(!HIDDEN_BUT_NEWLINE.test(out), JSON.stringify(out));
          assert.equal(lines(out), lines(render(plain)));
        }
      }
      const explained = renderExplanation(explainPhase(tenant.task), NOW, palette(false));
      assert.ok(!HIDDEN_BUT_NEWLINE.test(explained), JSON.stringify(explained));
      assert.equal(lines(explained), lines(renderExplanation(explainPhase(plain.task), NOW, palette(false))));
      const list = renderExplanationList([explainPhase(tenant.task)], NOW, palette(false), true, true);
      assert.ok(!HIDDEN_BUT_NEWLINE.test(list), JSON.stringify(list));
      assert.equal(lines(list), 3);
    }),
    { seed: 22, numRuns: 300 },
  );
});
