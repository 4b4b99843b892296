// AITask v1alpha1: the seed API (deprecated, still served). One string names the target,
// the threshold is an integer percent, the interval a Go-style duration string.

import { GROUP, message, WORD_MAX_LENGTH, type Envelope } from './common.ts';
import type { Infer } from './infer.ts';

export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Remediation actions, PascalCase as the seed spelled them. */
export const ACTIONS = ['RestartPod', 'ScaleUp', 'ScaleDown', 'CordonNode', 'Noop'] as const;

/** Go duration strings limited to h/m/s units, e.g. `90s`, `5m`, `1h30m`. */
export const DURATION_PATTERN = '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$';

export const specSchema = {
  type: 'object',
  description: 'What to watch and how to heal it (v1alpha1, deprecated: use v2).',
  required: ['target', 'threshold', 'action'],
  properties: {
    target: {
      type: 'string',
      description: 'Deployment to watch: "name" (the AITask\'s namespace) or "namespace/name".',
      minLength: 1,
      maxLength: 317,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    },
    threshold: {
      type: 'integer',
      description: 'Breach threshold in percent (0-100).',
      minimum: 0,
      maximum: 100,
    },
    action: { type: 'string', description: 'Remediation to run on a breach.', enum: ACTIONS },
    interval: {
      type: 'string',
      description: 'How often to evaluate, as a duration between 10s and 1h (e.g. "90s", "5m").',
      minLength: 2,
      maxLength: 16,
      pattern: DURATION_PATTERN,
      'x-kubernetes-validations': [
        {
          rule: "duration(self) >= duration('10s') && duration(self) <= duration('1h')",
          message: 'interval must be between 10s and 1h',
        },
      ],
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
    phase: { type: 'string', maxLength: WORD_MAX_LENGTH, description: 'Lifecycle phase.' },
    message: { ...message, description: 'Human-readable account of the phase.' },
  },
} as const;

export type Spec = Infer<typeof specSchema>;
export type Status = Infer<typeof statusSchema>;
export type Action = (typeof ACTIONS)[number];
/** An AITask as read or written at aiops.example.com/v1alpha1. */
export type AITask = Envelope<typeof API_VERSION, Spec, Status>;
