// The seed's first phase: an AITask the operator sees for the first time (no status yet)
// gets `phase: Pending` at once, before its target and metric are read, so `kubectl get at`
// shows it was picked up even while a slow Prometheus holds the first evaluation. No
// observedGeneration is set: its spec has not been evaluated yet. Pure.

import type * as v2 from '../../api/schema/v2.ts';
import { ConditionType, Reason, setCondition } from '../../api/status/conditions.ts';

/** What the Pending status says. */
export const PENDING_MESSAGE = 'seen by the operator; the first evaluation is under way';

/**
 * The status to write on first sight of an AITask: `status` with phase Pending, Ready
 * Unknown and Reconciling True; undefined when the AITask already has a phase. `now` is an
 * RFC 3339 time (metaTime).
 */
export function firstSight(status: v2.Status | undefined, now: string): v2.Status | undefined {
  if (status?.phase !== undefined) return undefined;
  const progressing = { reason: Reason.Progressing, message: PENDING_MESSAGE };
  let conditions = setCondition(
    status?.conditions,
    { type: ConditionType.Ready, status: 'Unknown', ...progressing },
    undefined,
    now,
  );
  conditions = setCondition(
    conditions,
    { type: ConditionType.Reconciling, status: 'True', ...progressing },
    undefined,
    now,
  );
  return { ...status, phase: 'Pending', message: PENDING_MESSAGE, conditions };
}
