// The slices of built-in Kubernetes kinds the operator reads and writes (the workloads an
// AITask targets, Pod, Scale, Node, Lease, Event), with their resource coordinates. Only the
// fields used here.

import type { ObjectMeta } from '../../api/schema/common.ts';
import type { ResourceType } from '../../lib/kube/resources.ts';

/** metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}

/**
 * A workload an AITask may target, the fields the operator reads: a Deployment or a
 * StatefulSet from its cache (`kind` is set by the cache's transform, trim.ts trimWorkload,
 * so a cached object says which kind it is), or any other kind as its /scale subresource
 * shows it (scale-targets.ts: `apiVersion`, `kind` and `scaleResource` set, `spec.replicas`
 * and `status.replicas` from the Scale, `status.selector` its label selector string).
 */
export interface Workload {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { replicas?: number; selector?: LabelSelector; template?: Record<string, unknown> };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number; selector?: string };
  /** Set on a target read through /scale: the resource discovery found for its kind. */
  scaleResource?: ResourceType;
}

/** apps/v1 Deployment, as the operator reads it. */
export type Deployment = Workload;

export interface Pod {
  metadata: ObjectMeta;
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount?: number }[];
  };
}

/** autoscaling/v1 Scale. */
export interface Scale {
  apiVersion?: 'autoscaling/v1';
  kind?: 'Scale';
  metadata: ObjectMeta;
  spec: { replicas?: number };
  status?: { replicas?: number };
}

export interface Node {
  metadata: ObjectMeta;
  spec?: { unschedulable?: boolean };
}

/** coordination.k8s.io/v1 Lease: the one type, lib/lease-liveness.ts's. */
export type { Lease } from '../../lib/lease-liveness.ts';

/** events.k8s.io/v1 Event. */
export interface KubeEvent {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: ObjectMeta;
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: 'Normal' | 'Warning';
  note: string;
  regarding: {
    apiVersion: string;
    kind: string;
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
}

/** Resource coordinates of the kinds above (and the others built in), from lib/kube/coordinates.ts. */
export { Resources } from '../../lib/kube/coordinates.ts';

/** Renders a LabelSelector as the `labelSelector` query string; throws on an empty selector. */
export function selectorString(sel: LabelSelector | undefined): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  if (parts.length === 0) throw new Error('the target has an empty selector; refusing to select every pod');
  return parts.join(',');
}

/** metav1.MicroTime (Events, Leases): RFC 3339 with microseconds, UTC. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
