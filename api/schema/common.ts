// Schema fragments shared by every AITask version: Kubernetes names, the standard
// metav1.Condition shape, and the object envelope (apiVersion, kind, metadata).

import type { Infer } from './infer.ts';

/** API group of the AITask CRD. */
export const GROUP = 'aiops.example.com';
/** Kind, plural, singular and short name of the CRD. */
export const KIND = 'AITask';
export const PLURAL = 'aitasks';
export const SINGULAR = 'aitask';
export const SHORT_NAMES = ['at'] as const;
/** `metadata.name` of the CRD. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** A DNS-1123 subdomain: the name of a Deployment. */
export const dnsSubdomain = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
} as const;

/** A DNS-1123 label: the name of a namespace. */
export const dnsLabel = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
} as const;

/** metav1.Condition, as upstream's CRDs publish it. */
export const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    },
    message: { type: 'string', maxLength: 32768 },
  },
} as const;

export const conditionsSchema = {
  type: 'array',
  maxItems: 32,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
  items: conditionSchema,
} as const;

export type Condition = Infer<typeof conditionSchema>;

/** The parts of ObjectMeta the project reads and writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  managedFields?: unknown[];
}

/** The envelope every version of the object shares. */
export interface Envelope<V extends string, Spec, Status> {
  apiVersion: V;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}
