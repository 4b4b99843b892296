// AITask v1: the first stable API. Target split into Deployment name + namespace, the
// threshold is a ratio (80 % = 0.8), snake_case actions, the interval in seconds.

import {
  conditionsSchema,
  dateTime,
  dnsLabel,
  dnsSubdomain,
  GROUP,
  MESSAGE_MAX_LENGTH,
  type Envelope,
} from './common.ts';
import type { Infer } from './infer.ts';

export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

export const ACTIONS = ['restart_pod', 'scale_up', 'scale_down', 'cordon_node', 'noop'] as const;
export const PHASES = ['Pending', 'Monitoring', 'Healing', 'Healed', 'Failed'] as const;

/**
 * Longest `status.lastDecision` line: v2's decision reason (MESSAGE_MAX_LENGTH) and room for
 * what conversion writes around it (`restart_pod (rules, blocked by CordonCapReached): `,
 * api/conversion/v1.ts), so any v2 decision the operator writes reads back valid at v1.
 */
export const DECISION_LINE_MAX_LENGTH = MESSAGE_MAX_LENGTH + 256;

export const specSchema = {
  type: 'object',
  description: 'What to watch and how to heal it (v1).',
  required: ['targetDeployment', 'threshold', 'action'],
  properties: {
    targetDeployment: { ...dnsSubdomain, description: 'Name of the Deployment to watch.' },
    namespace: {
      ...dnsLabel,
      description: "Namespace of the Deployment; empty means the AITask's own namespace.",
    },
    threshold: { type: 'number', description: 'Breach threshold as a ratio (0.8 = 80 %).', minimum: 0 },
    action: { type: 'string', description: 'Remediation to run on a breach.', enum: ACTIONS },
    intervalSeconds: {
      type: 'integer',
      description: 'Seconds between evaluations (10-3600).',
      minimum: 10,
      maximum: 3600,
      default: 60,
    },
    llmEndpoint: {
      type: 'string',
      description: 'Chat-completions URL of an advisory LLM.',
      format: 'uri',
      maxLength: 2048,
    },
  },
} as const;

export const statusSchema = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: PHASES, description: 'Lifecycle phase.' },
    lastDecision: {
      type: 'string',
      maxLength: DECISION_LINE_MAX_LENGTH,
      description: 'The last decision, in words.',
    },
    lastExecutionTime: { ...dateTime, description: 'When an action last ran.' },
    observedGeneration: { type: 'integer', minimum: 0, description: 'The generation this status describes.' },
    conditions: conditionsSchema,
  },
} as const;

export type Spec = Infer<typeof specSchema>;
export type Status = Infer<typeof statusSchema>;
export type Action = (typeof ACTIONS)[number];
/** An AITask as read or written at aiops.example.com/v1. */
export type AITask = Envelope<typeof API_VERSION, Spec, Status>;
