// The few built-in Kubernetes kinds the plugin reads or patches (Deployment, core Event,
// Node, Lease, ControllerRevision), typed to the fields it uses, with their API coordinates.

/** apps/v1 Deployment: replica counts and conditions. */
export interface DeploymentLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { replicas?: number };
  status?: {
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

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
