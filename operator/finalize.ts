// The AITask finalizer's cleanup, run when a task is being deleted: the nodes it cordoned are
// uncordoned, but only those whose cordon its own mark still holds (a cordon someone else
// lifted or made again since is left, and the stale mark dropped), then the finalizer is
// removed and Events say what was done and what was left. Which nodes to look at comes from
// the marks, never from status.cordonedNodes (anyone who may write aitasks/status writes
// it): the shared node view (edges/node-snapshots.ts), as listed after the deletion, says
// which nodes carry this AITask's mark, and only those are read and patched, a few at a time and within a deadline, so a
// status listing thousands of made-up names costs no request.

import type { AITaskClient } from '../api/aitask-client.ts';
import { mapWithLimits, someNames } from '../lib/bounded-concurrency.ts';
import { CORDONED_BY_ANNOTATION, markedFor } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import type { Logger } from '../lib/log.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { ActionGate } from './action-gate.ts';
import type { EventSpec } from './decision/vocabulary.ts';
import type { Actions } from './edges/actions.ts';
import type { EventRecorder } from './edges/events.ts';

/** What the cleanup uses. */
export interface FinalizerDeps {
  readonly tasks: Pick<AITaskClient, 'removeFinalizer'>;
  readonly actions: Pick<Actions, 'cordonStatesSince' | 'uncordon'>;
  readonly events: Pick<EventRecorder, 'record'>;
  /** Asked right before the cleanup (`before-cleanup`); false leaves it to a later run. */
  readonly gate?: ActionGate;
}

/** Nodes one finalizer run reads and patches at once: 4. */
export const FINALIZE_CONCURRENCY = 4;

/** No node is read for a finalizer run after this many ms: 30 s (the rest is left to the retry). */
export const FINALIZE_DEADLINE_MS = 30_000;

/** Node names an Event note lists before saying how many more: 10. */
export const NOTE_NAMES = 10;

/**
 * Uncordons the nodes carrying this AITask's mark whose cordon the mark still holds
 * (Actions.uncordon has the rule), FINALIZE_CONCURRENCY at a time, none started after
 * FINALIZE_DEADLINE_MS; then removes the finalizer. Names in status.cordonedNodes that the
 * node view knows but that carry no mark of it are named in a Warning (the first
 * NOTE_NAMES); names it does not know are not looked up. Does nothing when the finalizer is
 * already gone. API errors throw, and so does a run whose deadline left nodes unread (the
 * finalizer stays; the controller retries the reconcile with backoff).
 */
export async function finalizeTask(d: FinalizerDeps, task: v2.AITask, log: Logger): Promise<void> {
  if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) return;
  if (d.gate && !(await d.gate('before-cleanup', task.metadata.uid ?? ''))) return;
  const uid = task.metadata.uid ?? '';
  // Nodes as listed after the deletion: every mark written for this task is there, since
  // none is written once it is being deleted. deletionTimestamp has whole seconds, so a
  // list counts from the end of that second (or now, whichever comes first).
  const deleted = Date.parse(task.metadata.deletionTimestamp ?? '');
  const now = Date.now();
  const states = await d.actions.cordonStatesSince(
    Number.isNaN(deleted) ? now : Math.min(deleted + 999, now),
  );
  const marked = markedFor(states, uid);
  const mine = new Set(marked);
  const known = new Set(states.map((s) => s.name));
  const notOwned = (task.status?.cordonedNodes ?? []).filter((n) => known.has(n) && !mine.has(n));
  const run = await mapWithLimits(
    marked,
    { concurrency: FINALIZE_CONCURRENCY, deadlineMs: FINALIZE_DEADLINE_MS },
    (node) => d.actions.uncordon(node, uid),
  );
  if (run.left.length > 0)
    throw new Error(
      `finalizer cleanup ran past ${FINALIZE_DEADLINE_MS / 1000}s with ${run.left.length} marked node(s) not yet read (${someNames(run.left, NOTE_NAMES)}); retrying`,
    );
  const uncordoned: string[] = [];
  const dropped: string[] = [];
  for (const { item, result } of run.done) {
    if (result === 'uncordoned') uncordoned.push(item);
    else if (result === 'markDropped') dropped.push(item);
    else if (result === 'notOwned') notOwned.push(item);
  }
  const events: EventSpec[] = [];
  if (uncordoned.length > 0)
    events.push({
      type: 'Normal',
      reason: 'Uncordoned',
      action: 'Finalize',
      note: `uncordoned ${someNames(uncordoned, NOTE_NAMES)}`,
    });
  if (notOwned.length > 0)
    events.push({
      type: 'Warning',
      reason: 'UncordonRefused',
      action: 'Finalize',
      note: `left ${someNames(notOwned, NOTE_NAMES)} as they are: status lists them, but they do not carry this AITask's ${CORDONED_BY_ANNOTATION} mark`,
    });
  if (dropped.length > 0)
    events.push({
      type: 'Normal',
      reason: 'CordonMarkDropped',
      action: 'Finalize',
      note: `left ${someNames(dropped, NOTE_NAMES)} as they are: someone else lifted this AITask's cordon since (perhaps cordoning again); its ${CORDONED_BY_ANNOTATION} mark was removed`,
    });
  await d.events.record(task, events);
  await d.tasks.removeFinalizer(task.metadata.namespace ?? '', task.metadata.name ?? '');
  log.info('finalizer removed', {
    uncordoned,
    dropped,
    notOwned: notOwned.length,
    listed: task.status?.cordonedNodes?.length ?? 0,
  });
}
