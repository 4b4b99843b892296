// The status of an AITask whose reconcile hit an error no retry can fix (RBAC refused a
// request, the apiserver rejected one as invalid, a kind is not served): phase Failed with
// Stalled=True naming the reason, so `kubectl get at` and `explain-phase` show why it stopped
// instead of a log line repeating at every retry. Pure; the reconciler writes it once and
// tries again after a long wait or on the next spec change, and the next evaluation that
// gets through sets Stalled again from its own verdict.

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, metaTime } from '../../api/status/conditions.ts';
import { cond, event, withConditions, type EventSpec, type Task } from './vocabulary.ts';

/** A failure that retrying cannot fix: a condition reason and the apiserver's message. */
export interface TerminalCause {
  readonly reason: 'Forbidden' | 'Invalid' | 'KindNotServed';
  readonly message: string;
}

/**
 * The status after a terminal failure at `now` (ms) and its Warning Event; the message says
 * when the operator tries again (`retryInMs`, whole minutes).
 */
export function terminalStatus(
  task: Task,
  cause: TerminalCause,
  retryInMs: number,
  now: number,
): { status: v2.Status; events: EventSpec[] } {
  const generation = task.metadata.generation ?? 0;
  const message = `${cause.reason}: ${cause.message}; no retry can fix this: tried again in ${Math.round(retryInMs / 60_000)} min or when the spec changes`;
  const status = withConditions(
    { ...(task.status ?? {}), phase: 'Failed', message, observedGeneration: generation },
    [
      cond(ConditionType.Stalled, 'True', cause.reason, message),
      cond(ConditionType.Ready, 'False', cause.reason, message),
      cond(ConditionType.Reconciling, 'False', cause.reason, message),
    ],
    generation,
    metaTime(new Date(now)),
  );
  return { status, events: [event('Warning', cause.reason, 'Stall', message)] };
}
