// Cluster-wide guardrails against remediation storms (DESIGN §4, peers §4): a cap on
// remediations in flight across all AITasks (`--max-concurrent-remediations`), a cap on the
// share of nodes cordoned (`--max-cordoned-nodes-percent`), and one AITask per target
// Deployment (the oldest owns it). The slot registry is in memory — only the leader acts —
// and seeded from the cached statuses for tasks this process has not decided on yet.

import type * as v2 from '../../api/schema/v2.ts';
import { isInFlight } from './settle.ts';

/** True when `status` says a remediation is under way: acted and waiting for recovery, or mid-action. */
export function holdsSlot(status: v2.Status | undefined): boolean {
  return status?.phase === 'Healing' || isInFlight(status?.pendingDecision);
}

/**
 * Remediations in flight: an AITask holds a slot from the decision to act until its target
 * recovers, it stalls, pauses or is deleted (its status leaves Healing).
 */
export class RemediationSlots {
  readonly #cap: number;
  readonly #cached: () => Iterable<readonly [string, v2.Status | undefined]>;
  readonly #known = new Map<string, boolean>();

  /**
   * `cap` slots (0: unlimited); `cached` lists the informer's AITasks by key, used for keys
   * this process has not synced yet (after a start or a leader change).
   */
  constructor(cap: number, cached: () => Iterable<readonly [string, v2.Status | undefined]>) {
    this.#cap = cap;
    this.#cached = cached;
  }

  /** Keys holding a slot now, sorted. */
  holders(): string[] {
    const out = new Set<string>();
    for (const [key, holds] of this.#known) if (holds) out.add(key);
    for (const [key, status] of this.#cached()) if (!this.#known.has(key) && holdsSlot(status)) out.add(key);
    return [...out].sort();
  }

  /** Takes a slot for `key` (kept if it already holds one); undefined when granted, else the holders. */
  acquire(key: string): string[] | undefined {
    if (this.#known.get(key) === true) return undefined;
    const holders = this.holders().filter((k) => k !== key);
    if (this.#cap > 0 && holders.length >= this.#cap) return holders;
    this.#known.set(key, true);
    return undefined;
  }

  /** Records whether `key` holds a slot per its latest status; returns true when a slot was freed. */
  sync(key: string, status: v2.Status | undefined): boolean {
    const before = this.#known.get(key) ?? false;
    const now = holdsSlot(status);
    this.#known.set(key, now);
    return before && !now;
  }

  /** Forgets `key` (deleted); returns true when it held a slot. */
  forget(key: string): boolean {
    const held = this.#known.get(key) ?? false;
    this.#known.delete(key);
    return held;
  }

  /** The cap (0: unlimited). */
  get cap(): number {
    return this.#cap;
  }
}

/** A node as the cordon cap sees it. */
export interface NodeState {
  readonly name: string;
  readonly unschedulable: boolean;
}

/**
 * Whether cordoning `node` keeps the cordoned share of `nodes` within `maxPercent`; when not,
 * the reason (NodeAlreadyCordoned: someone cordoned it already, it is not claimed).
 */
export function cordonAllowed(
  nodes: readonly NodeState[],
  node: string,
  maxPercent: number,
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
  return { ok: true };
}

/** The AITask that owns a target among those naming it: the oldest, then by key. */
export function targetOwner(tasks: readonly Pick<v2.AITask, 'metadata'>[]): string | undefined {
  const live = tasks.filter((t) => t.metadata.deletionTimestamp === undefined);
  const key = (t: Pick<v2.AITask, 'metadata'>): string =>
    `${t.metadata.namespace ?? ''}/${t.metadata.name ?? ''}`;
  return live
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        key(a).localeCompare(key(b)),
    )
    .map(key)[0];
}
