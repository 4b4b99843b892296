// The few built-in Kubernetes kinds the plugin reads or patches (the workloads an AITask
// targets, the autoscaling/v1 Scale any other target kind is read through, core Event, Node,
// Lease, ControllerRevision), typed to the fields it uses, with their API coordinates.

import type { TargetKind } from '../api/schema/v2.ts';

/** apps/v1 Deployment: replica counts and conditions. */
export interface DeploymentLike {
  metadata?: { name?: string; namespace?: string; uid?: string };
  spec?: { replicas?: number };
  status?: {
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/**
 * apps/v1 StatefulSet: replica counts, the update strategy, and the generation and revisions
 * its rollout is judged by.
 */
export interface StatefulSetLike {
  metadata?: { name?: string; namespace?: string; uid?: string; generation?: number };
  spec?: {
    replicas?: number;
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

/**
 * autoscaling/v1 Scale, as a kind's /scale subresource answers: the scaled object's own
 * name, namespace and UID, its desired replicas (omitted when 0) and its current replicas and
 * label selector (a string, as `status.selector` holds it).
 */
export interface ScaleLike {
  metadata?: { name?: string; namespace?: string; uid?: string };
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

/**
 * An AITask's target as read, tagged with how it was read: an apps/v1 Deployment or
 * StatefulSet as itself (spec.target.kind), any other kind through its /scale subresource
 * (`kind: 'Scale'`; `type` names the target as targetTypeName does, e.g. "Shard.example.com").
 */
export type LiveTarget =
  | { readonly kind: Extract<TargetKind, 'Deployment'>; readonly object: DeploymentLike }
  | { readonly kind: Extract<TargetKind, 'StatefulSet'>; readonly object: StatefulSetLike }
  | { readonly kind: 'Scale'; readonly type: string; readonly object: ScaleLike };

/** core/v1 Event, including the fields events.k8s.io/v1 writers fill. */
export interface KubeEventLike {
  metadata?: { name?: string; creationTimestamp?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

/** core/v1 Node: whether it is cordoned, and by which AITask (api/cordon.ts). */
export interface NodeLike {
  metadata?: {
    name?: string;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    /** Who set which field: tells whether our mark still holds the cordon (api/cordon.ts). */
    managedFields?: unknown[];
  };
  spec?: { unschedulable?: boolean };
}

/** API coordinates of the kinds above, from lib/kube/coordinates.ts: Events are `coreEvents` (core/v1). */
export { Resources } from '../lib/kube/coordinates.ts';
