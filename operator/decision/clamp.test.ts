import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import * as v2 from '../../api/schema/v2.ts';
import type { JSONSchemaProps } from '../../api/schema/infer.ts';
import { boundRequeue, brokenRules, clampSpec, MAX_REQUEUE_MS, MIN_REQUEUE_MS } from './clamp.ts';

const base: v2.Spec = {
  target: { kind: 'Deployment', name: 'web' },
  trigger: { threshold: 1 },
  remediation: { action: 'ScaleUp' },
};

/** A spec as a hostile store could hold it: any JSON where numbers belong. */
function raw(over: Record<string, unknown>): v2.Spec {
  return over as unknown as v2.Spec;
}

test('clampSpec: table', () => {
  const cases: [string, v2.Spec, v2.Spec][] = [
    ['within bounds: unchanged', { ...base, intervalSeconds: 30 }, { ...base, intervalSeconds: 30 }],
    ['intervalSeconds 0 → 10', { ...base, intervalSeconds: 0 }, { ...base, intervalSeconds: 10 }],
    ['intervalSeconds -5 → 10', { ...base, intervalSeconds: -5 }, { ...base, intervalSeconds: 10 }],
    ['intervalSeconds 1e9 → 3600', { ...base, intervalSeconds: 1e9 }, { ...base, intervalSeconds: 3600 }],
    ['intervalSeconds 10.7 → 10', { ...base, intervalSeconds: 10.7 }, { ...base, intervalSeconds: 10 }],
    ['intervalSeconds "0": dropped (default)', raw({ ...base, intervalSeconds: '0' }), base],
    ['intervalSeconds null: dropped', raw({ ...base, intervalSeconds: null }), base],
    [
      'forSeconds -1 → 0, 1e7 cooldown → 86400',
      {
        ...base,
        trigger: { threshold: 1, forSeconds: -1 },
        remediation: { action: 'ScaleUp', cooldownSeconds: 1e7 },
      },
      {
        ...base,
        trigger: { threshold: 1, forSeconds: 0 },
        remediation: { action: 'ScaleUp', cooldownSeconds: 86400 },
      },
    ],
    [
      'maxAttempts 0 → 1, 1000 → 100',
      { ...base, remediation: { action: 'ScaleUp', maxAttempts: 0 } },
      { ...base, remediation: { action: 'ScaleUp', maxAttempts: 1 } },
    ],
    [
      'scale: step 0 → 1, max 0 → 1, min 5 > max → max',
      { ...base, remediation: { action: 'ScaleUp', scale: { step: 0, minReplicas: 5, maxReplicas: 0 } } },
      { ...base, remediation: { action: 'ScaleUp', scale: { step: 1, minReplicas: 1, maxReplicas: 1 } } },
    ],
    [
      'scale: negative min → 0, step 1e6 → 1000',
      { ...base, remediation: { action: 'ScaleUp', scale: { step: 1e6, minReplicas: -3 } } },
      { ...base, remediation: { action: 'ScaleUp', scale: { step: 1000, minReplicas: 0 } } },
    ],
    [
      'llm timeoutSeconds 0 → 1',
      { ...base, decision: { mode: 'LLM', llm: { endpoint: 'http://x', timeoutSeconds: 0 } } },
      { ...base, decision: { mode: 'LLM', llm: { endpoint: 'http://x', timeoutSeconds: 1 } } },
    ],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(clampSpec(spec), want, what);
  const t = clampSpec(raw({ ...base, trigger: { threshold: 'x' } })).trigger.threshold;
  assert.ok(Number.isNaN(t), 'a non-number threshold never breaches');
});

test('clampSpec (property): every number within the schema bounds, whatever is stored', () => {
  const anything = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.constant(undefined),
    fc.string(),
    fc.constant(null),
  );
  fc.assert(
    fc.property(anything, anything, anything, anything, anything, anything, (i, f, c, m, s, lo) => {
      const spec = raw({
        ...base,
        intervalSeconds: i,
        trigger: { threshold: 1, forSeconds: f },
        remediation: {
          action: 'ScaleUp',
          cooldownSeconds: c,
          maxAttempts: m,
          scale: { step: s, minReplicas: lo },
        },
      });
      const out = clampSpec(spec);
      const within = (v: number | undefined, lo_: number, hi: number) =>
        v === undefined || (Number.isInteger(v) && v >= lo_ && v <= hi);
      assert.ok(within(out.intervalSeconds, 10, 3600));
      assert.ok(within(out.trigger.forSeconds, 0, 86400));
      assert.ok(within(out.remediation.cooldownSeconds, 0, 86400));
      assert.ok(within(out.remediation.maxAttempts, 1, 100));
      assert.ok(within(out.remediation.scale?.step, 1, 1000));
      assert.ok(within(out.remediation.scale?.minReplicas, 0, Number.MAX_SAFE_INTEGER));
    }),
    { seed: 21 },
  );
});

test('boundRequeue: never below 1 s, never above a day, a non-number falls back', () => {
  assert.equal(boundRequeue(0, 60_000), MIN_REQUEUE_MS);
  assert.equal(boundRequeue(-5, 60_000), MIN_REQUEUE_MS);
  assert.equal(boundRequeue(NaN, 60_000), 60_000);
  assert.equal(boundRequeue(Infinity, 60_000), 60_000);
  assert.equal(boundRequeue(1e12, 60_000), MAX_REQUEUE_MS);
  assert.equal(boundRequeue(5000, 60_000), 5000);
});

/** Every rule message the v2 spec schema declares. */
function specRuleMessages(): string[] {
  const out: string[] = [];
  const stack: JSONSchemaProps[] = [v2.specSchema];
  for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
    out.push(...(s['x-kubernetes-validations'] ?? []).map((r) => r.message));
    stack.push(...Object.values(s.properties ?? {}));
  }
  return out;
}

test('brokenRules: each CEL rule of the v2 spec, table', () => {
  const cases: [string, unknown, string[]][] = [
    ['a valid spec keeps them all', { ...base, decision: { mode: 'Rules' } }, []],
    [
      'minReplicas 9 > maxReplicas 1',
      { ...base, remediation: { action: 'ScaleUp', scale: { minReplicas: 9, maxReplicas: 1 } } },
      ['spec.remediation.scale: minReplicas must not exceed maxReplicas'],
    ],
    [
      'mode LLM without llm',
      { ...base, decision: { mode: 'LLM' } },
      ['spec.decision: decision.llm is required when mode is LLM'],
    ],
    [
      'a custom kind without its apiVersion',
      { ...base, target: { kind: 'Shard', name: 'db' } },
      ['spec.target: target.apiVersion is required for a kind other than Deployment and StatefulSet'],
    ],
    [
      'a custom kind with its apiVersion',
      { ...base, target: { apiVersion: 'db.example.com/v1', kind: 'Shard', name: 'db' } },
      [],
    ],
    ['not an object', 'x', []],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(brokenRules(spec), want, what);
  const covered = new Set(cases.flatMap(([, , want]) => want.map((w) => w.slice(w.indexOf(': ') + 2))));
  for (const message of specRuleMessages()) assert.ok(covered.has(message), `no row breaks "${message}"`);
});
