// AITask v2: the storage version and conversion hub. Structured target, trigger and
// remediation, decision mode (rules or LLM advice), and the safety switches.

import { API_VERSION_MAX_LENGTH, API_VERSION_PATTERN } from '../../lib/kube/discovery.ts';
import {
  conditionsSchema,
  CORDONED_NODES_MAX_ITEMS,
  dateTime,
  dnsLabel,
  dnsSubdomain,
  GROUP,
  ID_MAX_LENGTH,
  message,
  MODEL_MAX_LENGTH,
  NAME_MAX_LENGTH,
  NAMESPACE_MAX_LENGTH,
  WORD_MAX_LENGTH,
  type Envelope,
} from './common.ts';
import type { Infer } from './infer.ts';

export const VERSION = 'v2';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

export const ACTIONS = ['RestartPod', 'ScaleUp', 'ScaleDown', 'CordonNode', 'Noop'] as const;
export const PHASES = [
  'Pending',
  'Monitoring',
  'Healing',
  'Healed',
  'Failed',
  'Paused',
  'AwaitingApproval',
] as const;
export const OPERATORS = ['GreaterThan', 'LessThan'] as const;
export const DECISION_MODES = ['Rules', 'LLM'] as const;
export const DECISION_SOURCES = ['rules', 'llm'] as const;
export const APPROVALS = ['Auto', 'Manual'] as const;
/**
 * The kinds the operator knows without discovery, both apps/v1 and watched through a cache:
 * a Deployment (what a v1alpha1 or v1 AITask always targets) or a StatefulSet. Any other kind
 * `spec.target` may name with its `apiVersion` is read and scaled through its /scale
 * subresource, found by API discovery.
 */
export const TARGET_KINDS = ['Deployment', 'StatefulSet'] as const;

/** The apiVersion of the TARGET_KINDS, and what an empty `spec.target.apiVersion` means. */
export const TARGET_DEFAULT_API_VERSION = 'apps/v1';

const targetSchema = {
  type: 'object',
  description: 'The workload to watch, named as an HPA or KEDA scaleTargetRef names it.',
  required: ['kind', 'name'],
  properties: {
    apiVersion: {
      type: 'string',
      minLength: 2,
      maxLength: API_VERSION_MAX_LENGTH,
      pattern: API_VERSION_PATTERN,
      description:
        'API group and version of the target (group/version, or v1 for the core group); empty means apps/v1. Required for a kind other than Deployment and StatefulSet.',
    },
    kind: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      pattern: '^[A-Z][A-Za-z0-9]*$',
      description:
        "Kind of the target. Deployment (what v1alpha1 and v1 target) and StatefulSet need no apiVersion; any other kind names its apiVersion and must serve the /scale subresource, whose status.selector says which pods may be its own. Every kind is scaled through /scale; RestartPod and CordonNode act on one pod whose controller chain leads to the target by UID: the pod the metric's sample names in its pod label, when it is one of them; else, for a StatefulSet (which controls its pods directly) the highest ordinal, for a Deployment (through a ReplicaSet) and any other kind (through the owners its pods name) a not-ready pod first, then the most restarts. The operator acts on another kind only once an admin grants it get and update on that kind's scale subresource.",
    },
    name: { ...dnsSubdomain, description: 'Name of the target.' },
    namespace: {
      ...dnsLabel,
      description: "Namespace of the target; empty means the AITask's own namespace.",
    },
  },
  'x-kubernetes-validations': [
    {
      rule: "has(self.apiVersion) || self.kind == 'Deployment' || self.kind == 'StatefulSet'",
      message: 'target.apiVersion is required for a kind other than Deployment and StatefulSet',
    },
  ],
} as const;

const triggerSchema = {
  type: 'object',
  description: 'When the target is in breach.',
  required: ['threshold'],
  properties: {
    query: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: "PromQL returning one sample; empty means the operator's default query for the target.",
    },
    threshold: { type: 'number', description: 'Value the metric is compared with.' },
    operator: {
      type: 'string',
      enum: OPERATORS,
      description: 'Comparison that means breach (default GreaterThan).',
    },
    forSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 86400,
      description: 'Seconds the breach must hold before acting (default 0).',
    },
  },
} as const;

const scaleSchema = {
  type: 'object',
  description: 'Bounds for ScaleUp/ScaleDown.',
  properties: {
    step: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      description: 'Replicas added or removed per action (default 1).',
    },
    minReplicas: { type: 'integer', minimum: 0, description: 'Never scale below this.' },
    maxReplicas: { type: 'integer', minimum: 1, description: 'Never scale above this.' },
  },
  'x-kubernetes-validations': [
    {
      rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
      message: 'minReplicas must not exceed maxReplicas',
    },
  ],
} as const;

const remediationSchema = {
  type: 'object',
  description: 'What to do on a breach and how often.',
  required: ['action'],
  properties: {
    action: { type: 'string', enum: ACTIONS, description: 'Remediation to run.' },
    scale: scaleSchema,
    cooldownSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 86400,
      description: 'Seconds after an action before the next one on the same target (operator default 300).',
    },
    maxAttempts: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      description: 'Actions without recovery before the task is Failed (operator default 3).',
    },
  },
} as const;

const decisionSchema = {
  type: 'object',
  description: 'Who decides: rules alone, or an LLM advising within the rules.',
  properties: {
    mode: { type: 'string', enum: DECISION_MODES, description: 'Rules (default) or LLM.' },
    llm: {
      type: 'object',
      required: ['endpoint'],
      properties: {
        endpoint: {
          type: 'string',
          format: 'uri',
          maxLength: 2048,
          description: 'OpenAI-compatible chat-completions URL.',
        },
        model: {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          description: 'Model name sent to the endpoint.',
        },
        timeoutSeconds: {
          type: 'integer',
          minimum: 1,
          maximum: 120,
          description: 'Per-call timeout (operator default 10).',
        },
      },
    },
  },
  'x-kubernetes-validations': [
    {
      rule: "!has(self.mode) || self.mode != 'LLM' || has(self.llm)",
      message: 'decision.llm is required when mode is LLM',
    },
  ],
} as const;

export const specSchema = {
  type: 'object',
  description: 'What to watch and how to heal it (v2).',
  required: ['target', 'trigger', 'remediation'],
  properties: {
    target: targetSchema,
    trigger: triggerSchema,
    remediation: remediationSchema,
    intervalSeconds: {
      type: 'integer',
      minimum: 10,
      maximum: 3600,
      description: 'Seconds between evaluations (10-3600, operator default 60).',
    },
    decision: decisionSchema,
    dryRun: { type: 'boolean', description: 'Decide and report, never act.' },
    paused: { type: 'boolean', description: 'Stop evaluating and acting.' },
    approval: {
      type: 'string',
      enum: APPROVALS,
      description: 'Manual: wait for approval before acting (default Auto).',
    },
  },
} as const;

const decisionRecordSchema = {
  type: 'object',
  required: ['id', 'action', 'source', 'reason', 'at'],
  properties: {
    id: {
      type: 'string',
      maxLength: ID_MAX_LENGTH,
      description: 'Unique id of the decision, for crash-safe execution.',
    },
    action: { type: 'string', enum: ACTIONS },
    source: { type: 'string', enum: DECISION_SOURCES },
    reason: message,
    metricValue: { type: 'number' },
    threshold: { type: 'number' },
    executed: { type: 'boolean' },
    blockedBy: {
      type: 'string',
      maxLength: WORD_MAX_LENGTH,
      description: 'The guardrail that stopped the action, if any.',
    },
    at: dateTime,
    generation: {
      type: 'integer',
      minimum: 0,
      description:
        'metadata.generation of the AITask the decision was made from; an approval holds only while it is current.',
    },
    target: {
      type: 'object',
      description:
        'The target (Deployment or StatefulSet, as spec.target.kind says) the decision acts on, as it was made; an approval holds only while the spec still names it (and, when recorded, it still has this UID).',
      required: ['namespace', 'name'],
      properties: {
        namespace: { type: 'string', maxLength: NAMESPACE_MAX_LENGTH },
        name: { type: 'string', maxLength: NAME_MAX_LENGTH },
        uid: {
          type: 'string',
          maxLength: ID_MAX_LENGTH,
          description: 'UID of the target when the decision was made.',
        },
      },
    },
    llm: {
      type: 'object',
      description:
        'The LLM call behind this decision, when one went out (advice or a failure after the call).',
      required: ['model', 'latencyMs'],
      properties: {
        model: { type: 'string', maxLength: MODEL_MAX_LENGTH, description: 'Model the request named.' },
        latencyMs: {
          type: 'integer',
          minimum: 0,
          description: 'Wall time of the call in milliseconds, every attempt within it included.',
        },
        promptTokens: {
          type: 'integer',
          minimum: 0,
          description: "Prompt tokens, as the server's usage reported them (absent when it did not).",
        },
        completionTokens: {
          type: 'integer',
          minimum: 0,
          description: "Completion tokens, as the server's usage reported them (absent when it did not).",
        },
      },
    },
    effect: {
      type: 'object',
      description: 'What the action changes, resolved before acting; verified after a restart.',
      properties: {
        fromReplicas: { type: 'integer', minimum: 0, description: 'Replicas before a scale.' },
        replicas: { type: 'integer', minimum: 0, description: 'Replicas a scale sets.' },
        pod: {
          type: 'string',
          maxLength: NAME_MAX_LENGTH,
          description: 'Pod RestartPod evicts or whose node CordonNode cordons.',
        },
        podUID: { type: 'string', maxLength: ID_MAX_LENGTH, description: 'UID of that pod.' },
        node: { type: 'string', maxLength: NAME_MAX_LENGTH, description: 'Node CordonNode cordons.' },
      },
    },
  },
} as const;

export const statusSchema = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: PHASES, description: 'Lifecycle phase.' },
    message: { ...message, description: 'Human-readable account of the phase.' },
    lastDecision: decisionRecordSchema,
    pendingDecision: decisionRecordSchema,
    lastExecutionTime: dateTime,
    observedGeneration: { type: 'integer', minimum: 0 },
    attempts: { type: 'integer', minimum: 0, description: 'Actions since the target last recovered.' },
    breachSince: { ...dateTime, description: 'Start of the current breach.' },
    cordonedNodes: {
      type: 'array',
      'x-kubernetes-list-type': 'set',
      maxItems: CORDONED_NODES_MAX_ITEMS,
      items: { type: 'string', maxLength: NAME_MAX_LENGTH },
      description: 'Nodes this task cordoned; its finalizer uncordons exactly these.',
    },
    conditions: conditionsSchema,
  },
} as const;

export type Spec = Infer<typeof specSchema>;
export type Status = Infer<typeof statusSchema>;
export type DecisionRecord = Infer<typeof decisionRecordSchema>;
/** The intended effect of a decision (status.pendingDecision.effect). */
export type DecisionEffect = NonNullable<DecisionRecord['effect']>;
/** The LLM call behind a decision (status.lastDecision.llm). */
export type DecisionLLMCall = NonNullable<DecisionRecord['llm']>;
export type Action = (typeof ACTIONS)[number];
export type Phase = (typeof PHASES)[number];
/** A kind the operator knows without discovery (TARGET_KINDS). */
export type TargetKind = (typeof TARGET_KINDS)[number];
/** An AITask as read or written at aiops.example.com/v2. */
export type AITask = Envelope<typeof API_VERSION, Spec, Status>;
