// The remediations, as thin adapters over the API: RestartPod evicts one pod through the
// Eviction API (so PodDisruptionBudgets are honoured), ScaleUp/ScaleDown write the target's
// scale subresource bound to its resourceVersion, CordonNode cordons the chosen pod's node
// within the cordon caps (cordons.ts, which also uncordons and releases the stale marks the
// sweep finds). Pods are the target's only through controller references by UID (Pod →
// ReplicaSet → Deployment; Pod → StatefulSet; Pod → … → another kind: owner-chain.ts), never by labels alone: a tenant's bare Pod
// with the target's labels on any node is never picked. A plan is first resolved (which
// pod, which node) so the decision written before acting names its effect, which a restarted
// operator verifies (currentEffect). A target's ReplicaSets and pods are read a page at a
// time (page sizes from a byte budget), each page reduced to what ownership and the choice
// read (trim.ts trimPod) before the next, and at most MAX_PODS_CONSIDERED pods are kept: a
// tenant's pods carrying its target's labels cost requests, never memory. A selector the
// target's owner wrote that cannot be listed with is that owner's error (target-invalid.ts).
// Choosing the pod is pure (pod-choice.ts). The nodes are read through one shared,
// periodically listed view (node-snapshots.ts), built here and handed to the cordons.

import { cordonHeldBy, type CordonState, type MarkRelease } from '../../api/cordon.ts';
import { targetTypeName } from '../../api/schema/target.ts';
import { ConflictError, NotFoundError, TooManyRequestsError } from '../../lib/kube/errors.ts';
import { pageSizeFor, ResourceClient, resourcePath, type ResourceType } from '../../lib/kube/resources.ts';
import type { KindDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import type { ActionPlan, BlockReason } from '../decision/decide.ts';
import {
  Resources,
  selectorString,
  type Node,
  type Pod,
  type Scale,
  type Workload,
} from '../runtime/kinds.ts';
import { rulesOf } from '../runtime/target-kinds.ts';
import { MAX_PODS_CONSIDERED, POD_PAGE_BYTES, trimPod, trimReplicaSet } from '../runtime/trim.ts';
import type { EffectObservation } from '../decision/settle.ts';
import type { ActionOutcome } from '../decision/vocabulary.ts';
import { Cordons, type ActingTask, type UncordonResult } from './cordons.ts';
import { NODE_SNAPSHOT_MAX_AGE_MS, NodeSnapshots } from './node-snapshots.ts';
import { OwnerChain } from './owner-chain.ts';
import { ownedSetUIDs, pickPod, podsControlledBy, type ReplicaSet } from './pod-choice.ts';
import { assertSelector, carrying } from './target-invalid.ts';

/** ReplicaSets, read to find the pods a Deployment owns. */
const replicaSets: ResourceType = { group: 'apps', version: 'v1', plural: 'replicasets', namespaced: true };

/** A plan with its target resolved: the pod to evict, the node to cordon (for the AITask `owner`, its UID). */
export type Prepared =
  | { readonly action: 'ScaleUp' | 'ScaleDown'; readonly from: number; readonly replicas: number }
  | { readonly action: 'RestartPod'; readonly pod: string; readonly podUID?: string }
  | {
      readonly action: 'CordonNode';
      readonly pod: string;
      readonly podUID?: string;
      readonly node: string;
      readonly owner: ActingTask;
    }
  | { readonly action: 'Noop' };

/** A plan that cannot run, and why. */
export interface Unprepared {
  readonly blockedBy: BlockReason;
  readonly message: string;
}

/** The effect a prepared plan names (recorded in the decision before acting). */
export function effectOf(p: Prepared): v2.DecisionEffect {
  switch (p.action) {
    case 'ScaleUp':
    case 'ScaleDown':
      return { fromReplicas: p.from, replicas: p.replicas };
    case 'RestartPod':
      return { pod: p.pod, ...(p.podUID !== undefined ? { podUID: p.podUID } : {}) };
    case 'CordonNode':
      return { pod: p.pod, ...(p.podUID !== undefined ? { podUID: p.podUID } : {}), node: p.node };
    case 'Noop':
      return {};
  }
}

/** Runs remediation plans against the cluster. */
export class Actions {
  readonly #transport: KubeTransport;
  readonly #pods: ResourceClient<Pod>;
  readonly #replicaSets: ResourceClient<ReplicaSet>;
  readonly #cordons: Cordons;
  readonly #owners: OwnerChain;

  /**
   * `discovery`: finds the kinds of owners between pods and a target read through /scale.
   * `maxCordonedPercent`: share of the cluster's nodes that may be unschedulable after a
   * cordon (default 34); `maxCordonedPerNamespace`: nodes the AITasks of one namespace may
   * hold cordoned at once (default 1; 0: only the cluster-wide share); `nodeMaxAgeMs`: how
   * long one list of the nodes serves every reader (default NODE_SNAPSHOT_MAX_AGE_MS, 10 s).
   */
  constructor(
    transport: KubeTransport,
    discovery: KindDiscovery,
    maxCordonedPercent = 34,
    maxCordonedPerNamespace = 1,
    nodeMaxAgeMs = NODE_SNAPSHOT_MAX_AGE_MS,
  ) {
    this.#transport = transport;
    this.#pods = new ResourceClient(transport, Resources.pods);
    this.#replicaSets = new ResourceClient(transport, replicaSets);
    this.#owners = new OwnerChain(transport, discovery);
    const nodes = new ResourceClient<Node>(transport, Resources.nodes);
    const snapshots = new NodeSnapshots({
      page: (token, limit) =>
        nodes.page(undefined, { limit, ...(token !== undefined ? { continue: token } : {}) }),
      maxAgeMs: nodeMaxAgeMs,
    });
    this.#cordons = new Cordons(nodes, snapshots, { maxCordonedPercent, maxCordonedPerNamespace });
  }

  /**
   * Resolves `plan` on the target: picks one of the pods it owns (and its node), the one the
   * metric named when it is one of them, else the first in its kind's order; checks the cordon caps. `owner` is the AITask acting (the mark a cordon leaves on
   * the node). Throws TargetInvalidError when the target's selector cannot be listed with.
   * `signal` (the reconcile's deadline) aborts the lists of its pods and ReplicaSets.
   */
  async prepare(
    plan: ActionPlan,
    target: Workload,
    owner: ActingTask,
    signal?: AbortSignal,
  ): Promise<Prepared | Unprepared> {
    if (plan.action === 'Noop') return { action: 'Noop' };
    if (plan.action === 'ScaleUp' || plan.action === 'ScaleDown') return plan;
    const namespace = target.metadata.namespace ?? '';
    const rules = rulesOf(target);
    const { pods, unread } = await this.#podsOf(namespace, target, signal);
    const pod = pickPod(pods, rules.podOrder, 'pod' in plan ? plan.pod : undefined);
    if (!pod)
      return {
        blockedBy: 'NoPodToRestart',
        message: `no pod of ${rules.kind} ${namespace}/${target.metadata.name ?? ''} to act on${unread !== undefined ? ` (an owner on its pods' controller chain is not readable: ${unread})` : ''}`,
      };
    const name = pod.metadata.name ?? '';
    const uid = pod.metadata.uid !== undefined ? { podUID: pod.metadata.uid } : {};
    if (plan.action === 'RestartPod') return { action: 'RestartPod', pod: name, ...uid };
    const node = pod.spec?.nodeName;
    if (node === undefined)
      return { blockedBy: 'NoPodToRestart', message: `pod ${namespace}/${name} is not scheduled on a node` };
    const allowed = await this.#cordons.check(node, owner);
    if (!allowed.ok) return { blockedBy: allowed.reason, message: allowed.message };
    return { action: 'CordonNode', pod: name, ...uid, node, owner };
  }

  /**
   * Runs a prepared plan; guardrail refusals come back as `executed: false`. A scale whose
   * starting point moved underneath throws ConflictError (the reconcile retries).
   */
  async run(p: Prepared, target: Workload): Promise<ActionOutcome> {
    const namespace = target.metadata.namespace ?? '';
    switch (p.action) {
      case 'Noop':
        return { executed: true, message: 'recorded only (Noop)' };
      case 'ScaleUp':
      case 'ScaleDown':
        return this.#scale(target, p.from, p.replicas);
      case 'RestartPod':
        return this.#evict(namespace, p.pod, p.podUID);
      case 'CordonNode':
        return this.#cordons.cordon(p.node, `${namespace}/${p.pod}`, p.owner);
    }
  }

  /**
   * What is in place now of a decision's effect (for settling an interrupted decision) of
   * the AITask with UID `owner`: a cordoned node counts only while that mark holds its
   * cordon (a missing node is not cordoned by it either). `target` is undefined when it is
   * gone or the AITask may not read it (the caller checks the boundary): then no pod is read.
   * Throws TargetInvalidError when the target's selector cannot be listed with.
   */
  async currentEffect(
    decision: v2.DecisionRecord,
    target: Workload | undefined,
    owner: string,
  ): Promise<EffectObservation> {
    const e = decision.effect ?? {};
    const obs: { replicas?: number; podPresent?: boolean; nodeCordonedByTask?: boolean } = {};
    if (target?.spec?.replicas !== undefined) obs.replicas = target.spec.replicas;
    if (e.pod !== undefined && target !== undefined && decision.action === 'RestartPod') {
      const { pods } = await this.#podsOf(target.metadata.namespace ?? '', target);
      obs.podPresent = pods.some(
        (p) =>
          p.metadata.name === e.pod &&
          (e.podUID === undefined || p.metadata.uid === e.podUID) &&
          p.metadata.deletionTimestamp === undefined,
      );
    }
    if (e.node !== undefined) obs.nodeCordonedByTask = cordonHeldBy(await this.#cordons.node(e.node), owner);
    return obs;
  }

  /** Cordons.uncordon: lifts `owner`'s cordon of `node` while its mark still holds it. */
  uncordon(node: string, owner: string): Promise<UncordonResult> {
    return this.#cordons.uncordon(node, owner);
  }

  /** Cordons.states: every node's CordonState from the shared view. */
  cordonStates(): Promise<readonly CordonState[]> {
    return this.#cordons.states();
  }

  /** Cordons.statesSince: every node's CordonState from a list begun at or after `since` (ms). */
  cordonStatesSince(since: number): Promise<readonly CordonState[]> {
    return this.#cordons.statesSince(since);
  }

  /** Cordons.releaseMark: carries out a stale mark's release on the node as it is now. */
  releaseMark(
    release: MarkRelease,
    taskExists: (uid: string) => boolean,
    scope?: string,
  ): Promise<MarkRelease | undefined> {
    return this.#cordons.releaseMark(release, taskExists, scope);
  }

  /**
   * The pods `target` owns (pod-choice.ts: a Deployment's through the ReplicaSets it
   * controls, a StatefulSet's directly, another kind's through the owners its pods name:
   * owner-chain.ts), trimmed (trimPod), at most MAX_PODS_CONSIDERED of them: its selector
   * narrows every list, read a page of pageSizeFor(POD_PAGE_BYTES) at a time, the
   * ownerReferences decide. A Deployment's owned ReplicaSets are found first (at most
   * MAX_PODS_CONSIDERED), and pods are not read when there are none. `unread`: an owner on a
   * chain the operator may not read. A selector that does not parse (checked before the first
   * list) or that the apiserver refuses (400, 422) throws TargetInvalidError: its owner's to fix.
   * `signal` aborts the lists.
   */
  async #podsOf(
    namespace: string,
    target: Workload,
    signal?: AbortSignal,
  ): Promise<{ pods: Pod[]; unread?: string }> {
    const uid = target.metadata.uid;
    if (uid === undefined || uid === '') return { pods: [] };
    const rules = rulesOf(target);
    const labelSelector =
      rules.via === 'owners' ? target.status?.selector : selectorString(target.spec?.selector);
    const type = targetTypeName({ apiVersion: target.apiVersion, kind: rules.kind });
    const object = `${type} ${namespace}/${target.metadata.name ?? ''}`;
    const field = rules.via === 'owners' ? '/scale status.selector' : 'spec.selector';
    if (labelSelector !== undefined) assertSelector(object, field, labelSelector);
    const narrowed = {
      ...(labelSelector !== undefined && labelSelector !== '' ? { labelSelector } : {}),
      limit: pageSizeFor(POD_PAGE_BYTES),
    };
    const controllers = new Set<string>();
    if (rules.via === 'ReplicaSet')
      await carrying(object, field, () =>
        this.#replicaSets.forEachPage(
          namespace,
          narrowed,
          (items) => {
            for (const id of ownedSetUIDs(uid, items.map(trimReplicaSet))) controllers.add(id);
            return controllers.size < MAX_PODS_CONSIDERED;
          },
          signal,
        ),
      );
    else controllers.add(uid);
    if (controllers.size === 0) return { pods: [] };
    const pods: Pod[] = [];
    const keep =
      rules.via === 'owners'
        ? (items: Pod[]) => items.filter((p) => (p.metadata.ownerReferences ?? []).length > 0)
        : (items: Pod[]) => podsControlledBy(rules.via ?? rules.kind, controllers, items);
    await carrying(object, field, () =>
      this.#pods.forEachPage(
        namespace,
        narrowed,
        (items) => {
          for (const p of keep(items.map(trimPod))) if (pods.length < MAX_PODS_CONSIDERED) pods.push(p);
          return pods.length < MAX_PODS_CONSIDERED;
        },
        signal,
      ),
    );
    return rules.via === 'owners' ? this.#owners.podsLeadingTo(uid, namespace, pods, signal) : { pods };
  }

  async #scale(target: Workload, from: number, replicas: number): Promise<ActionOutcome> {
    const { kind, resource } = rulesOf(target);
    const namespace = target.metadata.namespace ?? '';
    const name = target.metadata.name ?? '';
    const path = resourcePath(resource, namespace, name, 'scale');
    // The scale subresource shares the target's resourceVersion, which its controller bumps
    // with every status update: a 409 is retried (up to 5 reads) as long as the replicas are
    // still what the decision saw; a change of replicas is a real conflict.
    for (let attempt = 1; ; attempt++) {
      const scale = await this.#transport.request<Scale>({ path });
      const current = scale.spec.replicas ?? 0;
      if (current !== from)
        throw new ConflictError(
          409,
          { message: `replicas of ${namespace}/${name} changed from ${from} to ${current}` },
          'stale',
        );
      try {
        await this.#transport.request<Scale>({
          method: 'PUT',
          path,
          body: { ...scale, spec: { ...scale.spec, replicas } },
        });
        break;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 5) throw err;
      }
    }
    return {
      executed: true,
      message: `scaled ${kind} ${namespace}/${name} from ${from} to ${replicas} replicas`,
    };
  }

  /**
   * Evicts pod `name`; with `uid` (the pod chosen) the eviction is bound to it by a UID
   * precondition, so a pod replaced under the same name since it was chosen is not evicted:
   * the apiserver answers 409 Conflict, returned as not executed (never retried as a success).
   */
  async #evict(namespace: string, name: string, uid: string | undefined): Promise<ActionOutcome> {
    try {
      await this.#transport.request({
        method: 'POST',
        path: resourcePath(Resources.pods, namespace, name, 'eviction'),
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          ...(uid !== undefined ? { deleteOptions: { preconditions: { uid } } } : {}),
        },
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
      if (err instanceof ConflictError && uid !== undefined)
        return {
          executed: false,
          blockedBy: 'NoPodToRestart',
          message: `pod ${namespace}/${name} was replaced (no longer UID ${uid}) before eviction`,
        };
      throw err;
    }
    return { executed: true, message: `evicted pod ${namespace}/${name}` };
  }
}
