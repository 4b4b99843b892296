// The operator's cordons, over the nodes API: CordonNode marks a node unschedulable within the
// cordon caps (cluster share, per namespace) with the AITask's UID and namespace on the node
// (api/cordon.ts), in the same patch, bound to the node as checked, one cordon at a time so
// two never pass one check; only a node still cordoned by that mark is ever uncordoned for it
// or counted as its cordon. Node reads for the caps, the finalizer and the sweep come from one
// shared, periodically listed view (node-snapshots.ts), never a list per evaluation; a node is
// read by name only when it is about to be patched, and every patch invalidates the view.
// Conflicts are retried up to NODE_ATTEMPTS reads. The action adapter (actions.ts) builds this
// with its nodes client and view.

import {
  CORDON_FIELD_MANAGER,
  cordonHeld,
  cordonPatch,
  markOf,
  markRelease,
  uncordonPatch,
  unmarkPatch,
  type CordonState,
  type MarkRelease,
} from '../../api/cordon.ts';
import { ConflictError, NotFoundError } from '../../lib/kube/errors.ts';
import type { ResourceClient } from '../../lib/kube/resources.ts';
import { cordonAllowed, type NodeState } from '../decision/caps.ts';
import type { ActionOutcome } from '../decision/vocabulary.ts';
import type { Node } from '../runtime/kinds.ts';
import type { NodeSnapshots } from './node-snapshots.ts';

/** Reads of a node before a patch bound to it gives up on conflicts (kubelets and kwok update nodes often). */
const NODE_ATTEMPTS = 5;

/** The AITask acting: its UID and namespace (written in the cordon mark). */
export interface ActingTask {
  readonly uid: string;
  readonly namespace: string;
}

/**
 * What the finalizer's uncordon did: lifted its own cordon; left a node not marked as its
 * own; dropped its mark from a node whose cordon someone else lifted or replaced (the cordon,
 * if any, stays); or found no node.
 */
export type UncordonResult = 'uncordoned' | 'notOwned' | 'markDropped' | 'gone';

/** The cordon caps: how many nodes may be unschedulable, in all and for one namespace's AITasks. */
export interface CordonCaps {
  /** Share of the cluster's nodes that may be unschedulable after a cordon, in percent. */
  readonly maxCordonedPercent: number;
  /** Nodes the AITasks of one namespace may hold cordoned at once (0: only the cluster-wide share). */
  readonly maxCordonedPerNamespace: number;
}

/** Cordons and uncordons nodes for AITasks (see the header). */
export class Cordons {
  readonly #nodes: ResourceClient<Node>;
  readonly #snapshots: NodeSnapshots;
  readonly #caps: CordonCaps;
  #lock: Promise<unknown> = Promise.resolve();

  /** `nodes`: the nodes client; `snapshots`: the shared view of the nodes read from it. */
  constructor(nodes: ResourceClient<Node>, snapshots: NodeSnapshots, caps: CordonCaps) {
    this.#nodes = nodes;
    this.#snapshots = snapshots;
    this.#caps = caps;
  }

  /** Whether cordoning `node` for `owner` keeps the shared view of the nodes within the caps. */
  async check(node: string, owner: ActingTask): Promise<ReturnType<typeof cordonAllowed>> {
    return this.allowed(await this.#snapshots.read(), node, owner);
  }

  /**
   * Cordons `node` for the AITask `owner` after checking the caps again, marking it in the same
   * patch, bound to the node as checked; cordons are serialised so two never pass one check.
   */
  cordon(node: string, pod: string, owner: ActingTask): Promise<ActionOutcome> {
    const run = async (): Promise<ActionOutcome> => {
      for (let attempt = 1; ; attempt++) {
        const states = await this.#snapshots.fresh();
        const allowed = this.allowed(states, node, owner);
        if (!allowed.ok) return { executed: false, blockedBy: allowed.reason, message: allowed.message };
        const rv = states.find((n) => n.name === node)?.resourceVersion ?? '';
        try {
          await this.#patchNode(node, cordonPatch(owner.uid, owner.namespace, rv));
          break;
        } catch (err) {
          if (!(err instanceof ConflictError) || attempt >= NODE_ATTEMPTS) throw err;
        }
      }
      return { executed: true, message: `cordoned node ${node} (pod ${pod})`, cordoned: node };
    };
    const next = this.#lock.then(run, run);
    this.#lock = next.catch(() => undefined);
    return next;
  }

  /**
   * Uncordons `node` for the AITask with UID `owner` only while its mark still holds the
   * cordon (api/cordon.ts `cordonHeldBy`), with a patch bound to the node as read (re-read on
   * a conflict, up to NODE_ATTEMPTS times). A mark of `owner` whose cordon someone else lifted
   * or replaced is removed and the node left as it is; anything else is not touched.
   */
  async uncordon(node: string, owner: string): Promise<UncordonResult> {
    for (let attempt = 1; ; attempt++) {
      const live = await this.node(node);
      if (live === undefined) return 'gone';
      if (owner === '' || markOf(live)?.uid !== owner) return 'notOwned';
      const held = cordonHeld(live);
      const rv = live.metadata.resourceVersion ?? '';
      try {
        await this.#patchNode(node, held ? uncordonPatch(rv) : unmarkPatch(rv));
        return held ? 'uncordoned' : 'markDropped';
      } catch (err) {
        if (err instanceof NotFoundError) return 'gone';
        if (!(err instanceof ConflictError) || attempt >= NODE_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Every node's CordonState from the shared view (node-snapshots.ts): a list at most
   * `nodeMaxAgeMs` old, taken after this process's last node patch. API errors of the list throw.
   */
  states(): Promise<readonly CordonState[]> {
    return this.#snapshots.read();
  }

  /**
   * Every node's CordonState from a list begun at or after `since` (wall clock ms; lists
   * begun since are shared by every caller). API errors of the list throw.
   */
  statesSince(since: number): Promise<readonly CordonState[]> {
    return this.#snapshots.readSince(since);
  }

  /**
   * Carries out `release` on the node as it is now: re-read, decided again by `markRelease`
   * with `taskExists` (a node changed since the sweep's list is judged on its new state),
   * then patched bound to the resourceVersion read. Returns what was done, or undefined when
   * the node no longer needs it (gone, unmarked, marked anew). A conflict throws (the next
   * sweep tries again).
   */
  async releaseMark(
    release: MarkRelease,
    taskExists: (uid: string) => boolean,
    scope?: string,
  ): Promise<MarkRelease | undefined> {
    const live = await this.node(release.node);
    if (live === undefined) return undefined;
    const now = markRelease(live, taskExists, scope);
    if (now === undefined || now.uid !== release.uid) return undefined;
    const rv = live.metadata.resourceVersion ?? '';
    try {
      await this.#patchNode(release.node, now.uncordon ? uncordonPatch(rv) : unmarkPatch(rv));
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
    return now;
  }

  /** Whether cordoning `node` for `owner` keeps `states` within the caps (decision/caps.ts). */
  allowed(states: readonly CordonState[], node: string, owner: ActingTask): ReturnType<typeof cordonAllowed> {
    return cordonAllowed(states.map(capView), node, this.#caps.maxCordonedPercent, {
      namespace: owner.namespace,
      perNamespace: this.#caps.maxCordonedPerNamespace,
    });
  }

  /** The node `name` as it is now; undefined when it is gone. */
  async node(name: string): Promise<Node | undefined> {
    return this.#nodes.get(undefined, name).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
  }

  /**
   * A merge patch of a node under the operator's field manager (api/cordon.ts reads
   * managedFields by it); the shared node view is invalidated whatever the answer.
   */
  async #patchNode(name: string, patch: object): Promise<Node> {
    try {
      return await this.#nodes.patch(undefined, name, patch, { fieldManager: CORDON_FIELD_MANAGER });
    } finally {
      this.#snapshots.invalidate();
    }
  }
}

/** A node as the cordon cap counts it: a cordon is held for a namespace only while its mark holds it. */
function capView(s: CordonState): NodeState {
  const ns = s.held ? s.mark?.namespace : undefined;
  return {
    name: s.name,
    unschedulable: s.unschedulable,
    ...(ns !== undefined ? { cordonedForNamespace: ns } : {}),
  };
}
