// fast-check generators of valid AITask objects at every version (valid = accepted by
// the CRD schema), covering every field of each version's schema, used by the conversion
// property tests (pure and through the real apiserver), the webhook fuzz test and the
// conversion benchmark.

import fc from 'fast-check';
import * as v1alpha1 from '../../api/schema/v1alpha1.ts';
import * as v1 from '../../api/schema/v1.ts';
import * as v2 from '../../api/schema/v2.ts';
import type { Condition, ObjectMeta } from '../../api/schema/common.ts';
import { CONVERSION_ANNOTATION } from '../../api/install.ts';

/** Objects as they arrive from JSON: plain prototypes, no undefined values. */
function plain<T>(o: T): T {
  return JSON.parse(JSON.stringify(o)) as T;
}

const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const name = fc.oneof(
  label,
  fc.tuple(label, label).map(([a, b]) => `${a}.${b}`),
);
const time = fc
  .integer({ min: 1_500_000_000, max: 2_000_000_000 })
  .map((s) => new Date(s * 1000).toISOString().replace('.000Z', 'Z'));
const url = fc.constantFrom(
  'https://llm.example.com/v1/chat/completions',
  'http://127.0.0.1:8080/v1/chat/completions',
);
const ratio = fc
  .double({ min: 0, max: 10, noNaN: true, noDefaultInfinity: true })
  .map((x) => (Object.is(x, -0) ? 0 : x));
const anyNumber = fc
  .double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })
  .map((x) => (Object.is(x, -0) ? 0 : x));

const metadata: fc.Arbitrary<ObjectMeta> = fc.record(
  {
    name,
    namespace: label,
    uid: fc.uuid(),
    resourceVersion: fc.integer({ min: 1, max: 1e9 }).map(String),
    generation: fc.integer({ min: 1, max: 1000 }),
    labels: fc.dictionary(label, label, { minKeys: 1, maxKeys: 2 }).map((d) => ({ ...d })),
    annotations: fc
      .dictionary(
        fc.constantFrom('a.example.com/x', 'note', 'kubectl.kubernetes.io/last-applied-configuration'),
        fc.string(),
        { minKeys: 1, maxKeys: 2 },
      )
      .filter((a) => !(CONVERSION_ANNOTATION in a))
      .map((d) => ({ ...d })),
  },
  { requiredKeys: ['name', 'namespace'] },
);

const condition: fc.Arbitrary<Condition> = fc.record(
  {
    type: fc.constantFrom('Ready', 'Reconciling', 'Stalled', 'MetricsAvailable'),
    status: fc.constantFrom('True', 'False', 'Unknown'),
    observedGeneration: fc.integer({ min: 0, max: 1000 }),
    lastTransitionTime: time,
    reason: fc.constantFrom('Monitoring', 'NoData', 'TargetNotFound'),
    message: fc.string({ maxLength: 40 }),
  },
  { requiredKeys: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);
const conditions = fc.uniqueArray(condition, { selector: (c) => c.type, maxLength: 4 });

const durationString = fc.oneof(
  fc.integer({ min: 10, max: 3600 }).map((s) => `${s}s`),
  fc.integer({ min: 1, max: 60 }).map((m) => `${m}m`),
  fc.constantFrom('1h', '1m30s', '90s', '5m', '2m10s'),
);

/** Valid v1alpha1 AITasks. */
export const v1alpha1Task: fc.Arbitrary<v1alpha1.AITask> = fc
  .record({
    metadata,
    spec: fc.record(
      {
        target: fc.oneof(
          name,
          fc.tuple(label, name).map(([ns, n]) => `${ns}/${n}`),
        ),
        threshold: fc.integer({ min: 0, max: 100 }),
        action: fc.constantFrom(...v1alpha1.ACTIONS),
        interval: durationString,
        llmEndpoint: url,
      },
      { requiredKeys: ['target', 'threshold', 'action'] },
    ),
    status: fc.option(
      fc.record(
        { phase: fc.constantFrom('Pending', 'Monitoring', 'Healed', 'Custom'), message: fc.string() },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
  })
  .map(({ metadata: m, spec, status }) => ({
    apiVersion: v1alpha1.API_VERSION,
    kind: 'AITask' as const,
    metadata: m,
    spec,
    ...(status ? { status } : {}),
  }))
  .map(plain);

/** Valid v1 AITasks. */
export const v1Task: fc.Arbitrary<v1.AITask> = fc
  .record({
    metadata,
    spec: fc.record(
      {
        targetDeployment: name,
        namespace: label,
        threshold: ratio,
        action: fc.constantFrom(...v1.ACTIONS),
        intervalSeconds: fc.integer({ min: 10, max: 3600 }),
        llmEndpoint: url,
      },
      { requiredKeys: ['targetDeployment', 'threshold', 'action'] },
    ),
    status: fc.option(
      fc.record(
        {
          phase: fc.constantFrom(...v1.PHASES),
          lastDecision: fc.string({ maxLength: 30 }),
          lastExecutionTime: time,
          observedGeneration: fc.integer({ min: 0, max: 1000 }),
          conditions,
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
  })
  .map(({ metadata: m, spec, status }) => ({
    apiVersion: v1.API_VERSION,
    kind: 'AITask' as const,
    metadata: m,
    spec,
    ...(status ? { status } : {}),
  }))
  .map(plain);

const decisionEffect: fc.Arbitrary<v2.DecisionEffect> = fc.record(
  {
    fromReplicas: fc.integer({ min: 0, max: 50 }),
    replicas: fc.integer({ min: 0, max: 50 }),
    pod: name,
    podUID: fc.uuid(),
    node: name,
  },
  { requiredKeys: [] },
);

const llmCall: fc.Arbitrary<v2.DecisionLLMCall> = fc.record(
  {
    model: fc.constantFrom('gpt-x', 'local', 'llama-3.1-8b-instruct'),
    latencyMs: fc.integer({ min: 0, max: 120_000 }),
    promptTokens: fc.integer({ min: 0, max: 100_000 }),
    completionTokens: fc.integer({ min: 0, max: 4096 }),
  },
  { requiredKeys: ['model', 'latencyMs'] },
);

const decisionRecord: fc.Arbitrary<v2.DecisionRecord> = fc.record(
  {
    id: fc.uuid(),
    action: fc.constantFrom(...v2.ACTIONS),
    source: fc.constantFrom(...v2.DECISION_SOURCES),
    reason: fc.string({ maxLength: 30 }),
    metricValue: anyNumber,
    threshold: anyNumber,
    executed: fc.boolean(),
    blockedBy: fc.constantFrom('Cooldown', 'DryRun', 'MaxAttempts'),
    at: time,
    generation: fc.integer({ min: 0, max: 1000 }),
    target: fc.record({ namespace: name, name, uid: fc.uuid() }, { requiredKeys: ['namespace', 'name'] }),
    llm: llmCall,
    effect: decisionEffect,
  },
  { requiredKeys: ['id', 'action', 'source', 'reason', 'at'] },
);

const llmSettings = fc.record(
  {
    endpoint: url,
    model: fc.constantFrom('gpt-x', 'local'),
    timeoutSeconds: fc.integer({ min: 1, max: 120 }),
  },
  { requiredKeys: ['endpoint'] },
);

/** Target kinds: the built-in ones, a few custom ones, any the pattern allows (up to 63 characters). */
const targetKind = fc.oneof(
  fc.constantFrom(...v2.TARGET_KINDS, 'Shard', 'Rollout', 'CloneSet'),
  fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,62}$/),
  fc.stringMatching(/^[A-Z][a-z0-9]{62}$/),
);

/** Target API versions: apps/v1, the core v1, and custom group/versions (alpha and beta levels too). */
const targetApiVersion = fc.oneof(
  fc.constantFrom(
    v2.TARGET_DEFAULT_API_VERSION,
    'v1',
    'argoproj.io/v1alpha1',
    'db.example.com/v2beta3',
    // The longest the schema allows: a 253-character group and a 63-character version.
    `${['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.')}/v1${'0'.repeat(61)}`,
  ),
  fc
    .tuple(
      fc.array(label, { minLength: 1, maxLength: 3 }),
      fc.integer({ min: 1, max: 12 }),
      fc.constantFrom('', 'alpha', 'beta'),
      fc.integer({ min: 1, max: 9 }),
    )
    .map(
      ([group, major, level, minor]) =>
        `${group.join('.')}/v${major}${level === '' ? '' : `${level}${minor}`}`,
    ),
);

/**
 * `spec.target` as the CEL rule allows it: a built-in kind with no apiVersion, or any kind with
 * its apiVersion (apps/v1, the core v1, or a custom group/version).
 */
const target: fc.Arbitrary<v2.Spec['target']> = fc.oneof(
  fc.record(
    { kind: fc.constantFrom(...v2.TARGET_KINDS), name, namespace: label },
    { requiredKeys: ['kind', 'name'] },
  ),
  fc.record(
    { apiVersion: targetApiVersion, kind: targetKind, name, namespace: label },
    { requiredKeys: ['apiVersion', 'kind', 'name'] },
  ),
);

/** Valid v2 AITasks (every optional field sometimes present). */
export const v2Task: fc.Arbitrary<v2.AITask> = fc
  .record({
    metadata,
    spec: fc.record(
      {
        target,
        trigger: fc.record(
          {
            query: fc.constantFrom('up', 'sum(rate(http_requests_total[1m]))', 'avg(cpu) by (pod)'),
            threshold: anyNumber,
            operator: fc.constantFrom(...v2.OPERATORS),
            forSeconds: fc.integer({ min: 0, max: 86400 }),
          },
          { requiredKeys: ['threshold'] },
        ),
        remediation: fc.record(
          {
            action: fc.constantFrom(...v2.ACTIONS),
            scale: fc.record(
              {
                step: fc.integer({ min: 1, max: 1000 }),
                minReplicas: fc.integer({ min: 0, max: 5 }),
                maxReplicas: fc.integer({ min: 5, max: 50 }),
              },
              { requiredKeys: [] },
            ),
            cooldownSeconds: fc.integer({ min: 0, max: 86400 }),
            maxAttempts: fc.integer({ min: 1, max: 100 }),
          },
          { requiredKeys: ['action'] },
        ),
        intervalSeconds: fc.integer({ min: 10, max: 3600 }),
        decision: fc.oneof(
          // Rules (or no mode), with or without LLM settings kept for later.
          fc.record({ mode: fc.constant('Rules' as const), llm: llmSettings }, { requiredKeys: [] }),
          fc.record(
            { mode: fc.constant('LLM' as const), llm: llmSettings },
            { requiredKeys: ['mode', 'llm'] },
          ),
        ),
        dryRun: fc.boolean(),
        paused: fc.boolean(),
        approval: fc.constantFrom(...v2.APPROVALS),
      },
      { requiredKeys: ['target', 'trigger', 'remediation'] },
    ),
    status: fc.option(
      fc.record(
        {
          phase: fc.constantFrom(...v2.PHASES),
          message: fc.string({ maxLength: 30 }),
          lastDecision: decisionRecord,
          pendingDecision: decisionRecord,
          lastExecutionTime: time,
          observedGeneration: fc.integer({ min: 0, max: 1000 }),
          attempts: fc.integer({ min: 0, max: 100 }),
          breachSince: time,
          cordonedNodes: fc.uniqueArray(label, { maxLength: 3 }),
          conditions,
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
  })
  .map(({ metadata: m, spec, status }) => ({
    apiVersion: v2.API_VERSION,
    kind: 'AITask' as const,
    metadata: m,
    spec,
    ...(status ? { status } : {}),
  }))
  .map(plain);
