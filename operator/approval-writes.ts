// What the reconciler writes about an approval annotation once it has decided: the
// ApprovalIgnored Event of an approval that changed nothing else (never the same Event twice
// in a row, and off the task's interval only with a token of its namespace's budget), and the
// annotation's removal, which for an ignored approval also waits for a token: the annotation
// then stays until a later reconcile removes it. A tenant who writes bogus approvals in a
// loop gets no more Events and patches than its namespace's budget (reconcile-budget.ts).

import type { AITaskClient } from '../api/aitask-client.ts';
import { APPROVE_ANNOTATION } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import { NotFoundError } from '../lib/kube/errors.ts';
import type { ApprovalResult } from './decision/approval.ts';
import type { EventRecorder } from './edges/events.ts';
import type { Run } from './reconcile-deadline.ts';
import type { TaskMemory } from './task-memory.ts';

/** Where the writes go, and what pays for them. */
export interface ApprovalWrites extends Run {
  readonly tasks: AITaskClient;
  readonly events: EventRecorder;
  readonly memory: TaskMemory;
}

/**
 * Writes what `approval` of the AITask `key` calls for (see the header); `alone`: the
 * reconcile wrote no status (an ignored approval's Event went with it otherwise). Returns the
 * ms after which a reconcile should remove an ignored approval left in place, if one was.
 */
export async function answerApproval(
  w: ApprovalWrites,
  key: string,
  task: v2.AITask,
  approval: ApprovalResult,
  alone: boolean,
): Promise<number | undefined> {
  const { spend, deadline } = w;
  if (alone && approval.ignored && w.memory.newIgnored(key, approval.ignored.note, () => spend.may())) {
    deadline.check();
    await w.events.record(task, [approval.ignored]);
  }
  if (!approval.consume) return undefined;
  if (approval.approvedId !== undefined) spend.must();
  else if (!spend.may()) return spend.waitMs();
  deadline.check();
  await w.tasks
    .patch(task.metadata.namespace, task.metadata.name ?? '', {
      metadata: { annotations: { [APPROVE_ANNOTATION]: null } },
    })
    .catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
  return undefined;
}
