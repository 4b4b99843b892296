// The status vocabulary, in one place: the shapes every status builder speaks (the task it
// reads, the Events it asks for, an action's outcome, a plan's effect) and the small pure
// helpers that build conditions and Events. Used by evaluate.ts (the status before an action),
// outcome.ts (after it), settle.ts and approval.ts.

import type * as v2 from '../../api/schema/v2.ts';
import { setCondition, type ConditionInput, type ReasonName } from '../../api/status/conditions.ts';
import type { ActionPlan, BlockReason } from './decide.ts';

/** The reason of an Event: one of the vocabulary, or the action the operator ran. */
export type EventReason = ReasonName | v2.Action;

/** An Event to record on the AITask. `action` is what the operator did (events.k8s.io `action`). */
export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  readonly reason: EventReason;
  readonly action: string;
  readonly note: string;
}

/** Result of running an action. */
export type ActionOutcome =
  | { readonly executed: true; readonly message: string; readonly cordoned?: string }
  | { readonly executed: false; readonly blockedBy: BlockReason; readonly message: string };

/** The parts of an AITask the status builders read. */
export type Task = Pick<v2.AITask, 'metadata' | 'spec' | 'status'>;

/** A condition input. */
export function cond(
  type: ConditionInput['type'],
  status: ConditionInput['status'],
  reason: ConditionInput['reason'],
  message: string,
): ConditionInput {
  return { type, status, reason, message };
}

/** Applies condition inputs, then stamps every condition with the observed generation. */
export function withConditions(
  prev: v2.Status,
  inputs: ConditionInput[],
  generation: number,
  now: string,
): v2.Status {
  let list = prev.conditions ?? [];
  for (const input of inputs) list = setCondition(list, input, generation, now);
  return { ...prev, conditions: list.map((c) => ({ ...c, observedGeneration: generation })) };
}

/** `s` without `keys`. */
export function without(s: v2.Status, ...keys: (keyof v2.Status)[]): v2.Status {
  return Object.fromEntries(Object.entries(s).filter(([k]) => !keys.includes(k as keyof v2.Status)));
}

/** An Event spec. */
export function event(type: EventSpec['type'], reason: EventReason, action: string, note: string): EventSpec {
  return { type, reason, action, note };
}

/** The replicas a scale plan moves between (empty for other actions). */
export function planEffect(plan: ActionPlan): v2.DecisionEffect {
  return 'replicas' in plan ? { fromReplicas: plan.from, replicas: plan.replicas } : {};
}
