// What `kubectl aiops describe` shows, as one pure view: built from the AITask, its target's
// health (target-health.ts) and its Events, printed as text or handed to `-o json|yaml` unchanged.

import type { Condition } from '../api/schema/common.ts';
import type * as v2 from '../api/schema/v2.ts';
import { EXPLAIN_DEFAULTS, explainPhase } from '../api/status/explain.ts';
import type { KStatusResult } from '../api/status/kstatus.ts';
import type { KubeEventLike } from './kinds.ts';
import type { TargetHealth } from './target-health.ts';
import { targetNamespace } from '../api/schema/target.ts';

/** One related Event, oldest first in lists. */
export interface EventRow {
  type: string;
  reason: string;
  message: string;
  count: number;
  firstSeen?: string;
  lastSeen?: string;
  from: string;
}

/** The machine-readable describe output (`-o json|yaml`). */
export interface DescribeView {
  name: string;
  namespace: string;
  uid?: string;
  created?: string;
  deletionTimestamp?: string;
  /** `apiVersion` only when spec.target names one (a Deployment or StatefulSet need not). */
  target: {
    apiVersion?: string;
    kind: string;
    name: string;
    namespace: string;
    namespaceFrom: 'spec' | 'aitask';
  };
  trigger: { query?: string; operator: string; threshold: number; forSeconds: number };
  remediation: {
    action: string;
    scale?: v2.Spec['remediation']['scale'];
    cooldownSeconds?: number;
    maxAttempts?: number;
  };
  decision: { mode: string; llm?: { endpoint: string; model?: string; timeoutSeconds?: number } };
  intervalSeconds?: number;
  safety: { dryRun: boolean; paused: boolean; approval: string };
  phase: string;
  phaseSince?: string;
  message?: string;
  kstatus: KStatusResult;
  generation: number;
  observedGeneration?: number;
  attempts: number;
  cordonedNodes: string[];
  finalizers: string[];
  conditions: Condition[];
  lastDecision?: v2.DecisionRecord;
  pendingDecision?: v2.DecisionRecord;
  lastExecutionTime?: string;
  targetHealth: TargetHealth;
  events: EventRow[];
}

const opt = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> =>
  value === undefined ? {} : ({ [key]: value } as Record<K, V>);

/** Core/v1 Events (as written through either Events API) as rows, oldest first. */
export function eventRows(events: readonly KubeEventLike[]): EventRow[] {
  return events
    .map((e) => {
      const last =
        e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
      const first = e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
      return {
        type: e.type ?? 'Normal',
        reason: e.reason ?? '',
        message: (e.message ?? '').trim(),
        count: e.series?.count ?? e.count ?? 1,
        ...opt('firstSeen', first),
        ...opt('lastSeen', last),
        from: e.reportingComponent || e.source?.component || '',
      };
    })
    .sort((a, b) => Date.parse(a.lastSeen ?? '') - Date.parse(b.lastSeen ?? ''));
}

/** Assembles the view; every field comes from the inputs, nothing is fetched here. */
export function describeView(
  task: v2.AITask,
  health: TargetHealth,
  events: readonly EventRow[],
): DescribeView {
  const { metadata, spec } = task;
  const status = task.status ?? {};
  const ns = metadata.namespace ?? 'default';
  const explained = explainPhase(task);
  const llm = spec.decision?.llm;
  return {
    name: metadata.name ?? '',
    namespace: ns,
    ...opt('uid', metadata.uid),
    ...opt('created', metadata.creationTimestamp),
    ...opt('deletionTimestamp', metadata.deletionTimestamp),
    target: {
      ...opt('apiVersion', spec.target.apiVersion),
      kind: spec.target.kind,
      name: spec.target.name,
      namespace: targetNamespace(task) || ns,
      namespaceFrom: spec.target.namespace === undefined ? 'aitask' : 'spec',
    },
    trigger: {
      ...opt('query', spec.trigger.query),
      operator: spec.trigger.operator ?? 'GreaterThan',
      threshold: spec.trigger.threshold,
      forSeconds: spec.trigger.forSeconds ?? 0,
    },
    remediation: {
      action: spec.remediation.action,
      ...opt('scale', spec.remediation.scale),
      ...opt('cooldownSeconds', spec.remediation.cooldownSeconds),
      ...opt('maxAttempts', spec.remediation.maxAttempts),
    },
    decision: {
      mode: spec.decision?.mode ?? 'Rules',
      ...opt(
        'llm',
        llm && {
          endpoint: llm.endpoint,
          ...opt('model', llm.model),
          ...opt('timeoutSeconds', llm.timeoutSeconds),
        },
      ),
    },
    ...opt('intervalSeconds', spec.intervalSeconds),
    safety: { dryRun: spec.dryRun ?? false, paused: spec.paused ?? false, approval: spec.approval ?? 'Auto' },
    phase: explained.phase,
    ...opt('phaseSince', explained.since),
    ...opt('message', status.message),
    kstatus: explained.kstatus,
    generation: explained.generation,
    ...opt('observedGeneration', explained.observedGeneration),
    attempts: status.attempts ?? 0,
    cordonedNodes: status.cordonedNodes ?? [],
    finalizers: metadata.finalizers ?? [],
    conditions: status.conditions ?? [],
    ...opt('lastDecision', status.lastDecision),
    ...opt('pendingDecision', status.pendingDecision),
    ...opt('lastExecutionTime', status.lastExecutionTime),
    targetHealth: health,
    events: [...events],
  };
}

/** `value`, or the operator default marked as such. */
export function orDefault(value: number | undefined, key: keyof typeof EXPLAIN_DEFAULTS, unit = ''): string {
  return value === undefined ? `${EXPLAIN_DEFAULTS[key]}${unit} (default)` : `${value}${unit}`;
}
