// Schema fragments shared by every AITask version: Kubernetes names, the standard
// metav1.Condition shape, the object envelope (apiVersion, kind, metadata), and the length
// bounds every status field is held to. Every string, list and map of the CRD is bounded
// (api/crd-bounds.test.ts walks the generated CRD), so the apiserver refuses an oversized
// field at the door, CEL cost estimates stay finite, and the operator's own writes fit by
// construction (api/schema/clamp.ts cuts them to these bounds at the status-writing edge).

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

/**
 * Longest human-readable text in status, in characters (Unicode code points, as the
 * apiserver counts maxLength): 32768, metav1.Condition's bound on `message`. Applies to
 * condition messages, `status.message` and decision reasons. The operator writes a
 * sentence (quoting at most the task's own 4,096-character query and names); an LLM's
 * reason is cut to 60 characters before it gets there.
 */
export const MESSAGE_MAX_LENGTH = 32768;

/**
 * Longest RFC 3339 time in status, in characters: 64. metav1.Time writes 20
 * (`2006-01-02T15:04:05Z`), MicroTime 27; `format: date-time` alone bounds nothing (it
 * accepts any number of fraction digits).
 */
export const TIME_MAX_LENGTH = 64;

/** Longest identifier the operator records (a decision id or an object UID, both UUIDs of 36): 64. */
export const ID_MAX_LENGTH = 64;

/** Longest one-word token the operator records (a guardrail such as `CordonCapReached`, a phase): 64. */
export const WORD_MAX_LENGTH = 64;

/** Longest object name (a DNS-1123 subdomain: pods, nodes, Deployments): 253. */
export const NAME_MAX_LENGTH = 253;

/** Longest namespace name (a DNS-1123 label): 63. */
export const NAMESPACE_MAX_LENGTH = 63;

/** Longest model name, as `spec.decision.llm.model` allows: 256. */
export const MODEL_MAX_LENGTH = 256;

/**
 * Most nodes one AITask can record as cordoned: 5,000, the largest cluster Kubernetes
 * supports ("Considerations for large clusters"), since --max-cordoned-nodes-percent is at
 * most 100 % of the nodes. The default caps (34 %, one node per namespace) record one.
 */
export const CORDONED_NODES_MAX_ITEMS = 5000;

/** Most conditions in one status: 32. The operator writes seven types; the rest is room for other controllers. */
export const CONDITIONS_MAX_ITEMS = 32;

/** An RFC 3339 time, bounded. */
export const dateTime = { type: 'string', format: 'date-time', maxLength: TIME_MAX_LENGTH } as const;

/** Human-readable text, bounded. */
export const message = { type: 'string', maxLength: MESSAGE_MAX_LENGTH } as const;

/** A DNS-1123 subdomain: the name of a Deployment. */
export const dnsSubdomain = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
} as const;

const DNS_SUBDOMAIN = new RegExp(dnsSubdomain.pattern);

/** Whether `s` is a DNS-1123 subdomain (dnsSubdomain): the name of most objects, pods included. */
export function isDnsSubdomain(s: unknown): s is string {
  return typeof s === 'string' && s.length <= dnsSubdomain.maxLength && DNS_SUBDOMAIN.test(s);
}

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
    lastTransitionTime: dateTime,
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    },
    message,
  },
} as const;

export const conditionsSchema = {
  type: 'array',
  maxItems: CONDITIONS_MAX_ITEMS,
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
