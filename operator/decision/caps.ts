// Cluster-wide guardrails against remediation storms: a cap on
// remediations in flight across all AITasks (`--max-concurrent-remediations`) and a share of
// it per namespace (`--max-concurrent-remediations-per-namespace`, so one tenant cannot hold
// every slot), a cap on the share of nodes cordoned (`--max-cordoned-nodes-percent`) and on
// the nodes cordoned for one namespace's AITasks (`--max-cordoned-nodes-per-namespace`), and one
// AITask per target workload (the oldest of those allowed to act on it owns it). A slot is
// held only by a grant this process made (in memory, by AITask UID — only the leader acts):
// never by what a status says, which a tenant may write. A fresh leader starts with no
// holders, which is exact, not a loss: a slot spans one action, and after a restart or a
// change of leader no action of this process is running; a decision a stopped process left in
// flight is settled against the cluster (settle.ts) before that task acts again, and acting
// again asks for a slot. A grant lasts from the reconcile that acts to the
// next one that does not act (cooldown, recovered, at its replica bound, stalled, blocked)
// with no decision in flight, so a task that always breaches cannot keep its slot for a
// day-long cooldown nor by sitting at its maxReplicas. Only a grant that was used for an
// action wakes the tasks waiting for a slot when it ends: one refused by a later gate in the
// same reconcile (CordonCapReached, no pod, the LLM's noop) ends quietly, so tasks refused one
// after another cannot wake each other in a loop; they come back at their own interval. The
// registry remembers whom it refused: the keys refused a slot and not granted one since are
// the waiters, handed to the caller (and forgotten) when a slot is released, so the caller
// requeues exactly those and never reads them back from statuses.

import { targetNamespace } from '../../api/schema/target.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { namespaceOf } from '../../lib/keys.ts';
import { isInFlight } from './settle.ts';

/** Why a slot was refused: which cap, and who holds the slots it counts. */
export interface SlotRefusal {
  /** The flag of the cap that is full. */
  readonly flag: '--max-concurrent-remediations' | '--max-concurrent-remediations-per-namespace';
  readonly cap: number;
  /** The namespace whose share is full (per-namespace cap only). */
  readonly namespace?: string;
  /** Keys holding the slots that cap counts, sorted. */
  readonly holders: readonly string[];
}

/**
 * Remediations in flight: an AITask holds a slot from the grant of its decision to act until
 * a reconcile of it neither acts nor leaves a decision in flight, or it is deleted. Only
 * grants of this process count.
 */
export class RemediationSlots {
  readonly #cap: number;
  readonly #perNamespace: number;
  /** Grants by AITask UID: the key that holds the slot. */
  readonly #grants = new Map<string, string>();
  /** UIDs of grants used for an action. */
  readonly #used = new Set<string>();
  /** Keys refused a slot and not granted one since: the tasks waiting for a slot. */
  readonly #waiting = new Set<string>();

  /**
   * `cap` slots in all (0: unlimited), of which the AITasks of one namespace hold at most
   * `perNamespace` (0: no share, only `cap`).
   */
  constructor(cap: number, perNamespace: number) {
    this.#cap = cap;
    this.#perNamespace = perNamespace;
  }

  /** Keys holding a slot now, sorted. */
  holders(): string[] {
    return [...new Set(this.#grants.values())].sort();
  }

  /** Keys refused a slot and not granted one since, sorted: who a release wakes. */
  waiting(): string[] {
    return [...this.#waiting].sort();
  }

  /**
   * Grants a slot to the AITask `uid` at `key` (kept if it already holds one); undefined when
   * granted, else which cap is full: the cluster-wide one first, then the share of `key`'s
   * namespace. Both count only grants. A refused key waits (`waiting`) until it is granted a
   * slot, forgotten, or handed out by a release.
   */
  acquire(key: string, uid: string): SlotRefusal | undefined {
    const refusal = this.#refusal(key, uid);
    if (refusal !== undefined) this.#waiting.add(key);
    else {
      this.#grants.set(uid, key);
      this.#waiting.delete(key);
    }
    return refusal;
  }

  /** Which cap refuses `key` a slot now; undefined when `uid` holds one or one is free. */
  #refusal(key: string, uid: string): SlotRefusal | undefined {
    if (this.#grants.has(uid)) return undefined;
    const holders = [...this.#grants.values()].sort();
    if (this.#cap > 0 && holders.length >= this.#cap)
      return { flag: '--max-concurrent-remediations', cap: this.#cap, holders };
    const namespace = namespaceOf(key);
    const neighbours = holders.filter((k) => namespaceOf(k) === namespace);
    if (this.#perNamespace > 0 && neighbours.length >= this.#perNamespace)
      return {
        flag: '--max-concurrent-remediations-per-namespace',
        cap: this.#perNamespace,
        namespace,
        holders: neighbours,
      };
    return undefined;
  }

  /**
   * At the end of a reconcile of `uid`: ends its grant unless that reconcile `acted` or its
   * latest `status` has a decision in flight (written, its action not yet recorded). A status
   * never creates a grant. When a grant used for an action ends, returns the waiting keys
   * (sorted), which stop waiting: the caller requeues them. Otherwise, also when a grant
   * ends unused, returns none and the waiters keep waiting.
   */
  sync(uid: string, status: v2.Status | undefined, acted: boolean): readonly string[] {
    if (!this.#grants.has(uid)) return [];
    if (acted) this.#used.add(uid);
    if (acted || isInFlight(status?.pendingDecision)) return [];
    this.#grants.delete(uid);
    return this.#used.delete(uid) ? this.#release() : [];
  }

  /**
   * Ends every grant held at `key` and its wait (the AITask is gone). When a grant ended,
   * returns the waiting keys (sorted) as `sync` does; else none.
   */
  forget(key: string): readonly string[] {
    this.#waiting.delete(key);
    let freed = false;
    for (const [uid, k] of this.#grants)
      if (k === key) {
        this.#grants.delete(uid);
        this.#used.delete(uid);
        freed = true;
      }
    return freed ? this.#release() : [];
  }

  /** The waiting keys, sorted, which stop waiting. */
  #release(): string[] {
    const woken = this.waiting();
    this.#waiting.clear();
    return woken;
  }

  /** The cluster-wide cap (0: unlimited). */
  get cap(): number {
    return this.#cap;
  }

  /** The per-namespace share (0: none). */
  get perNamespace(): number {
    return this.#perNamespace;
  }
}

/** A node as the cordon cap sees it. */
export interface NodeState {
  readonly name: string;
  readonly unschedulable: boolean;
  /**
   * Namespace of the AITask whose mark holds this node's cordon (api/cordon.ts `cordonHeld`);
   * undefined when unmarked, the cordon is someone else's, or the mark predates namespaces.
   */
  readonly cordonedForNamespace?: string;
}

/** The per-namespace share of the cordon cap: at most `perNamespace` nodes held for `namespace` (0: no share). */
export interface CordonShare {
  readonly namespace: string;
  readonly perNamespace: number;
}

/**
 * Whether cordoning `node` keeps the cordoned share of `nodes` within `maxPercent` and, with
 * `share`, the nodes held for the acting AITask's namespace below `share.perNamespace`; when
 * not, the reason (NodeAlreadyCordoned: someone cordoned it already, it is not claimed).
 */
export function cordonAllowed(
  nodes: readonly NodeState[],
  node: string,
  maxPercent: number,
  share?: CordonShare,
):
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: 'CordonCapReached' | 'NodeAlreadyCordoned';
      readonly message: string;
    } {
  const target = nodes.find((n) => n.name === node);
  if (target?.unschedulable === true)
    return { ok: false, reason: 'NodeAlreadyCordoned', message: `node ${node} is already cordoned` };
  const cordoned = nodes.filter((n) => n.unschedulable).length;
  if ((cordoned + 1) * 100 > maxPercent * nodes.length)
    return {
      ok: false,
      reason: 'CordonCapReached',
      message: `cordoning ${node} would make ${cordoned + 1} of ${nodes.length} nodes unschedulable, over --max-cordoned-nodes-percent=${maxPercent}`,
    };
  if (share !== undefined && share.perNamespace > 0) {
    const mine = nodes.filter((n) => n.unschedulable && n.cordonedForNamespace === share.namespace);
    if (mine.length >= share.perNamespace)
      return {
        ok: false,
        reason: 'CordonCapReached',
        message: `AITasks of namespace ${share.namespace} hold ${mine.length} cordoned nodes (--max-cordoned-nodes-per-namespace=${share.perNamespace})`,
      };
  }
  return { ok: true };
}

/** The parts of an AITask that decide whether it may act on its target. */
export type TargetClaim = Pick<v2.AITask, 'metadata'> & {
  readonly spec: { readonly target: Pick<v2.AITask['spec']['target'], 'namespace'> };
};

/**
 * Whether `task` may act on its target: one in its own namespace always (an empty target
 * namespace is the task's own), one in another namespace only with `allowCrossNamespace`
 * (`--allow-cross-namespace`).
 */
export function mayTarget(task: TargetClaim, allowCrossNamespace: boolean): boolean {
  return allowCrossNamespace || targetNamespace(task) === (task.metadata.namespace ?? '');
}

/** The v1 `spec.namespace` the seed release (0.1.0) filled in when it was omitted. */
export const SEED_NAMESPACE_DEFAULT = 'default';

/**
 * Why `task`'s target in another namespace is refused, and what to change. A target
 * namespace `"default"` is named as what it most likely is: the seed release's default for
 * an omitted `spec.namespace`, carried over by the upgrade.
 */
export function crossNamespaceRefusal(
  task: TargetClaim & { spec: { target: { kind: string; name: string } } },
): string {
  const own = task.metadata.namespace ?? '';
  const ns = targetNamespace(task);
  const { kind, name } = task.spec.target;
  const refused = `${kind} ${ns}/${name} is in another namespace; the operator runs without --allow-cross-namespace`;
  if (ns !== SEED_NAMESPACE_DEFAULT) return refused;
  return (
    `${refused}. Its namespace "default" is probably the seed release's default (0.1.0 filled in ` +
    `an omitted v1 spec.namespace), not a choice: remove spec.target.namespace (v1: spec.namespace) ` +
    `to target ${kind} ${own}/${name}, or set it to the namespace you mean`
  );
}

/**
 * The AITask that owns a target among those naming it: the oldest live one that may act on
 * it (`mayTarget`: a refused task never owns, so it cannot squat a target), then by key.
 */
export function targetOwner(tasks: readonly TargetClaim[], allowCrossNamespace: boolean): string | undefined {
  const live = tasks.filter(
    (t) => t.metadata.deletionTimestamp === undefined && mayTarget(t, allowCrossNamespace),
  );
  const key = (t: TargetClaim): string => `${t.metadata.namespace ?? ''}/${t.metadata.name ?? ''}`;
  return live
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        key(a).localeCompare(key(b)),
    )
    .map(key)[0];
}
