// The AITask finalizer's cleanup, run when a task is being deleted: the nodes it cordoned are
// uncordoned, but only those whose cordon its own mark still holds (a cordon someone else
// lifted or made again since is left, and the stale mark dropped), then the finalizer is
// removed and Events say what was done and what was left.

import type { AITaskClient } from '../api/aitask-client.ts';
import { CORDONED_BY_ANNOTATION } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import type { Logger } from '../api/log.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { ActionGate } from './action-gate.ts';
import type { EventSpec } from './decision/vocabulary.ts';
import type { Actions } from './edges/actions.ts';
import type { EventRecorder } from './edges/events.ts';

/** What the cleanup uses. */
export interface FinalizerDeps {
  readonly tasks: AITaskClient;
  readonly actions: Actions;
  readonly events: EventRecorder;
  /** Asked right before the cleanup (`before-cleanup`); false leaves it to a later run. */
  readonly gate?: ActionGate;
}

/**
 * Uncordons the nodes of status.cordonedNodes whose cordon this AITask's mark still holds
 * (status alone is not trusted: anyone who may write aitasks/status could list any node;
 * Actions.uncordon has the rule), then removes
 * the finalizer. Does nothing when the finalizer is already gone. API errors throw (the
 * controller retries the reconcile with backoff).
 */
export async function finalizeTask(d: FinalizerDeps, task: v2.AITask, log: Logger): Promise<void> {
  if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) return;
  if (d.gate && !(await d.gate('before-cleanup', task.metadata.uid ?? ''))) return;
  const uncordoned: string[] = [];
  const notOwned: string[] = [];
  const dropped: string[] = [];
  for (const node of task.status?.cordonedNodes ?? []) {
    const result = await d.actions.uncordon(node, task.metadata.uid ?? '');
    if (result === 'uncordoned') uncordoned.push(node);
    else if (result === 'notOwned') notOwned.push(node);
    else if (result === 'markDropped') dropped.push(node);
  }
  const events: EventSpec[] = [];
  if (uncordoned.length > 0)
    events.push({
      type: 'Normal',
      reason: 'Uncordoned',
      action: 'Finalize',
      note: `uncordoned ${uncordoned.join(', ')}`,
    });
  if (notOwned.length > 0)
    events.push({
      type: 'Warning',
      reason: 'UncordonRefused',
      action: 'Finalize',
      note: `left ${notOwned.join(', ')} as they are: status lists them, but they do not carry this AITask's ${CORDONED_BY_ANNOTATION} mark`,
    });
  if (dropped.length > 0)
    events.push({
      type: 'Normal',
      reason: 'CordonMarkDropped',
      action: 'Finalize',
      note: `left ${dropped.join(', ')} as they are: someone else lifted this AITask's cordon since (perhaps cordoning again); its ${CORDONED_BY_ANNOTATION} mark was removed`,
    });
  await d.events.record(task, events);
  await d.tasks.removeFinalizer(task.metadata.namespace ?? '', task.metadata.name ?? '');
  log.info('finalizer removed', { uncordoned, notOwned, dropped });
}
