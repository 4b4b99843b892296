// kstatus-style summary of an AITask (the rules kubectl, Flux and Argo CD apply to any
// object), shared by the operator and `kubectl aiops explain-phase` so both always agree.

import type * as v2 from '../schema/v2.ts';
import { ConditionType, findCondition } from './conditions.ts';

/** kstatus' status values. */
export type KStatus = 'Terminating' | 'InProgress' | 'Failed' | 'Current';

export interface KStatusResult {
  status: KStatus;
  /** A CamelCase reason, e.g. `GenerationLag`. */
  reason: string;
  /** One sentence for humans. */
  message: string;
}

/** Computes the kstatus of an AITask (stored version) from its metadata and status alone. */
export function computeKStatus(task: Pick<v2.AITask, 'metadata' | 'status'>): KStatusResult {
  const { metadata, status } = task;
  if (metadata.deletionTimestamp !== undefined) {
    const fin = metadata.finalizers ?? [];
    return {
      status: 'Terminating',
      reason: 'Terminating',
      message: `deletion requested at ${metadata.deletionTimestamp}; waiting for finalizers: ${fin.length ? fin.join(', ') : 'none'}`,
    };
  }
  const generation = metadata.generation ?? 0;
  const observed = status?.observedGeneration;
  if (observed === undefined) {
    return {
      status: 'InProgress',
      reason: 'NotObserved',
      message: 'the operator has not reconciled this object yet',
    };
  }
  if (observed < generation) {
    return {
      status: 'InProgress',
      reason: 'GenerationLag',
      message: `spec generation ${generation} is newer than the observed generation ${observed}`,
    };
  }
  const stalled = findCondition(status?.conditions, ConditionType.Stalled);
  if (stalled?.status === 'True')
    return { status: 'Failed', reason: stalled.reason, message: stalled.message };
  const reconciling = findCondition(status?.conditions, ConditionType.Reconciling);
  if (reconciling?.status === 'True')
    return { status: 'InProgress', reason: reconciling.reason, message: reconciling.message };
  const ready = findCondition(status?.conditions, ConditionType.Ready);
  if (ready?.status === 'False')
    return { status: 'InProgress', reason: ready.reason, message: ready.message };
  return {
    status: 'Current',
    reason: ready?.reason ?? 'Current',
    message: ready?.message ?? 'observed and up to date',
  };
}
