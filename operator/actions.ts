// The remediations, as thin adapters over the API: RestartPod evicts one pod through the
// Eviction API (so PodDisruptionBudgets are honoured), ScaleUp/ScaleDown write the scale
// subresource bound to its resourceVersion, CordonNode marks the worst pod's node
// unschedulable. Choosing the pod is pure (pickPod).

import { ConflictError, NotFoundError, TooManyRequestsError } from '../api/kube/errors.ts';
import { ResourceClient, resourcePath } from '../api/kube/resources.ts';
import type { KubeTransport } from '../api/kube/transport.ts';
import type { ActionPlan } from './decide.ts';
import { Resources, selectorString, type Deployment, type Node, type Pod, type Scale } from './kinds.ts';
import type { ActionOutcome } from './status.ts';

function ready(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
  );
}

function restarts(pod: Pod): number {
  return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
}

/**
 * The pod to act on: not being deleted; a not-ready pod before a ready one, then the most
 * restarts, then the oldest, then by name (deterministic). Undefined when none qualifies.
 */
export function pickPod(pods: readonly Pod[]): Pod | undefined {
  return pods
    .filter((p) => p.metadata.deletionTimestamp === undefined)
    .sort(
      (a, b) =>
        Number(ready(a)) - Number(ready(b)) ||
        restarts(b) - restarts(a) ||
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    )[0];
}

/** Runs remediation plans against the cluster. */
export class Actions {
  readonly #transport: KubeTransport;
  readonly #pods: ResourceClient<Pod>;
  readonly #deployments: ResourceClient<Deployment>;
  readonly #nodes: ResourceClient<Node>;

  constructor(transport: KubeTransport) {
    this.#transport = transport;
    this.#pods = new ResourceClient(transport, Resources.pods);
    this.#deployments = new ResourceClient(transport, Resources.deployments);
    this.#nodes = new ResourceClient(transport, Resources.nodes);
  }

  /**
   * Runs `plan` on the Deployment; guardrail refusals come back as `executed: false`.
   * A scale whose starting point moved underneath throws ConflictError (the reconcile retries).
   */
  async run(plan: ActionPlan, deployment: Deployment): Promise<ActionOutcome> {
    const namespace = deployment.metadata.namespace ?? '';
    const name = deployment.metadata.name ?? '';
    switch (plan.action) {
      case 'Noop':
        return { executed: true, message: 'recorded only (Noop)' };
      case 'ScaleUp':
      case 'ScaleDown':
        return this.#scale(namespace, name, plan.from, plan.replicas);
      case 'RestartPod':
      case 'CordonNode': {
        const pod = pickPod(await this.#podsOf(namespace, deployment));
        if (!pod)
          return {
            executed: false,
            blockedBy: 'NoPodToRestart',
            message: `no pod of Deployment ${namespace}/${name} to act on`,
          };
        return plan.action === 'RestartPod' ? this.#evict(namespace, pod) : this.#cordon(pod);
      }
    }
  }

  /** Removes `spec.unschedulable` from `node`; a node that is gone counts as done. */
  async uncordon(node: string): Promise<void> {
    await this.#nodes.patch(undefined, node, { spec: { unschedulable: null } }).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
  }

  async #podsOf(namespace: string, deployment: Deployment): Promise<Pod[]> {
    const list = await this.#pods.list(namespace, {
      labelSelector: selectorString(deployment.spec?.selector),
    });
    return list.items;
  }

  async #scale(namespace: string, name: string, from: number, replicas: number): Promise<ActionOutcome> {
    const scale = await this.#deployments.transport.request<Scale>({
      path: resourcePath(Resources.deployments, namespace, name, 'scale'),
    });
    const current = scale.spec.replicas ?? 0;
    if (current !== from)
      throw new ConflictError(
        409,
        { message: `replicas of ${namespace}/${name} changed from ${from} to ${current}` },
        'stale',
      );
    await this.#transport.request<Scale>({
      method: 'PUT',
      path: resourcePath(Resources.deployments, namespace, name, 'scale'),
      body: { ...scale, spec: { ...scale.spec, replicas } },
    });
    return {
      executed: true,
      message: `scaled Deployment ${namespace}/${name} from ${from} to ${replicas} replicas`,
    };
  }

  async #evict(namespace: string, pod: Pod): Promise<ActionOutcome> {
    const name = pod.metadata.name ?? '';
    try {
      await this.#transport.request({
        method: 'POST',
        path: resourcePath(Resources.pods, namespace, name, 'eviction'),
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
    } catch (err) {
      if (err instanceof TooManyRequestsError)
        return {
          executed: false,
          blockedBy: 'PodDisruptionBudget',
          message: `eviction of pod ${namespace}/${name} refused: ${err.message}`,
        };
      if (err instanceof NotFoundError)
        return {
          executed: false,
          blockedBy: 'NoPodToRestart',
          message: `pod ${namespace}/${name} disappeared before eviction`,
        };
      throw err;
    }
    return {
      executed: true,
      message: `evicted pod ${namespace}/${name} (restarts ${restarts(pod)}, ready ${ready(pod)})`,
    };
  }

  async #cordon(pod: Pod): Promise<ActionOutcome> {
    const node = pod.spec?.nodeName;
    if (node === undefined)
      return {
        executed: false,
        blockedBy: 'NoPodToRestart',
        message: `pod ${pod.metadata.name ?? ''} is not scheduled on a node`,
      };
    await this.#nodes.patch(undefined, node, { spec: { unschedulable: true } });
    return {
      executed: true,
      message: `cordoned node ${node} (pod ${pod.metadata.name ?? ''})`,
      cordoned: node,
    };
  }
}
