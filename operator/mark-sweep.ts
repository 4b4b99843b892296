// The sweep of stale cordon marks (api/cordon.ts): finds marks whose AITask no longer exists
// (a tenant removed the finalizer, or emptied status.cordonedNodes, and deleted the task, so
// nobody would ever lift the cordon) and marks whose cordon someone else lifted or replaced,
// and releases them (api/cordon.ts `markRelease` decides, edges/actions.ts patches, each bound to the
// node's resourceVersion). An orphan is confirmed by a live list of AITasks before anything
// is released (the cache may lag after a start, or hold only this shard's AITasks), read a
// page of TASK_PAGE_SIZE at a time keeping only each task's reference, so the tasks' size,
// which tenants choose, is never held all at once. A
// dropped mark of an AITask that still exists also leaves its status.cordonedNodes. Runs
// only on the leader: once when it starts leading, every `intervalMs`, and a second after
// an AITask is deleted (a tenant's task deleted without its finalizer is released at once).
// Nodes are read from the shared node view (edges/node-snapshots.ts: one list per period for
// every reader), so a burst of deletions does not list the nodes once per sweep.

import type { AITaskClient } from '../api/aitask-client.ts';
import { ConflictError, NotFoundError } from '../lib/kube/errors.ts';
import { retryOnConflict } from '../lib/kube/resources.ts';
import { boundStatus } from '../api/status/bounded.ts';
import type { Logger } from '../lib/log.ts';
import type * as v2 from '../api/schema/v2.ts';
import { CORDONED_BY_ANNOTATION, staleMarksOf, type MarkRelease } from '../api/cordon.ts';
import { without } from './decision/vocabulary.ts';
import type { Actions } from './edges/actions.ts';
import type { EventRecorder } from './edges/events.ts';
import type { Informer } from './runtime/informer.ts';
import { TASK_PAGE_SIZE } from './runtime/trim.ts';

/** What the sweep reads and writes. */
export interface MarkSweepDeps {
  readonly actions: Pick<Actions, 'cordonStates' | 'releaseMark'>;
  readonly tasks: Pick<AITaskClient, 'forEachPage' | 'get' | 'replaceStatus'>;
  readonly taskCache: Pick<Informer<v2.AITask>, 'list'>;
  readonly events: Pick<EventRecorder, 'record'>;
  readonly log: Logger;
  /** The operator's `--namespace`: only marks of AITasks of that namespace (default: all). */
  readonly namespace?: string;
}

/** The default time between sweeps: 5 min (`--cordon-mark-sweep-interval`). */
export const DEFAULT_MARK_SWEEP_MS = 300_000;

/**
 * One sweep. Returns the releases carried out. API errors of the node list or the AITask
 * list throw (the next sweep tries again); a node that fails is logged and skipped.
 */
export async function sweepMarks(d: MarkSweepDeps): Promise<MarkRelease[]> {
  const nodes = await d.actions.cordonStates();
  const byUID = new Map<string, TaskRef>();
  for (const t of d.taskCache.list()) if (t.metadata.uid !== undefined) byUID.set(t.metadata.uid, t);
  let exists = (uid: string): boolean => byUID.has(uid);
  const first = staleMarksOf(nodes, exists, d.namespace);
  if (first.length === 0) return [];
  if (first.some((r) => r.why === 'orphaned')) {
    byUID.clear();
    await d.tasks.forEachPage(d.namespace, { limit: TASK_PAGE_SIZE }, (items) => {
      for (const t of items) if (t.metadata.uid !== undefined) byUID.set(t.metadata.uid, taskRef(t));
    });
    exists = (uid) => byUID.has(uid);
  }
  const done: MarkRelease[] = [];
  for (const candidate of staleMarksOf(nodes, exists, d.namespace)) {
    try {
      const r = await d.actions.releaseMark(candidate, exists, d.namespace);
      if (r === undefined) continue;
      done.push(r);
      const task = byUID.get(r.uid);
      d.log.warn(
        r.why === 'orphaned' ? 'released the cordon mark of a deleted AITask' : 'dropped a stale cordon mark',
        {
          node: r.node,
          aitaskUID: r.uid,
          ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
          uncordoned: r.uncordon,
        },
      );
      if (task !== undefined) await dropFromStatus(d, task, r.node);
    } catch (err) {
      d.log.warn('cannot release a cordon mark; the next sweep tries again', {
        node: candidate.node,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  return done;
}

/** What the sweep keeps of an AITask: enough to read it again and to name it in an Event. */
type TaskRef = Pick<v2.AITask, 'apiVersion' | 'kind' | 'metadata'>;

/** `t`'s reference alone (a listed task's spec and status are dropped with its page). */
function taskRef(t: v2.AITask): TaskRef {
  const { namespace, name, uid } = t.metadata;
  return {
    apiVersion: t.apiVersion,
    kind: t.kind,
    metadata: {
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(uid !== undefined ? { uid } : {}),
    },
  };
}

/** Removes `node` from the live status.cordonedNodes of `task` (bound to its resourceVersion) and says so in an Event. */
async function dropFromStatus(d: MarkSweepDeps, task: TaskRef, node: string): Promise<void> {
  const { namespace = '', name = '' } = task.metadata;
  const changed = await retryOnConflict(async () => {
    const live = await d.tasks.get(namespace, name);
    if (live.metadata.uid !== task.metadata.uid || live.status === undefined) return undefined;
    const listed = live.status.cordonedNodes ?? [];
    if (!listed.includes(node)) return undefined;
    const left = listed.filter((n) => n !== node);
    const status =
      left.length > 0 ? { ...live.status, cordonedNodes: left } : without(live.status, 'cordonedNodes');
    return d.tasks.replaceStatus({ ...live, status: boundStatus(status) });
  }).catch((err: unknown) => {
    if (err instanceof NotFoundError || err instanceof ConflictError) return undefined;
    throw err;
  });
  await d.events.record(changed ?? task, [
    {
      type: 'Normal',
      reason: 'CordonMarkDropped',
      action: 'CordonNode',
      note: `node ${node} is no longer cordoned by this AITask (someone else lifted the cordon, perhaps cordoning again): its ${CORDONED_BY_ANNOTATION} mark was removed and it is never uncordoned for this AITask`,
    },
  ]);
}

/** Delay of a sweep asked for by `soon()`: 1 s, so a burst of deletions costs one sweep. */
export const SOON_MS = 1000;

/** A running sweep loop. */
export interface MarkSweeper {
  /**
   * Sweeps within SOON_MS (an AITask was deleted: its marks may now be orphaned); while a
   * sweep runs, another follows it. Never postpones a sweep already due sooner.
   */
  soon(): void;
  /** Stops the loop and waits for a sweep under way. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Sweeps at once, then every `intervalMs` (default DEFAULT_MARK_SWEEP_MS) and after each
 * `soon()`, until stopped; a failed sweep is logged and the loop goes on.
 */
export function startMarkSweeper(d: MarkSweepDeps, intervalMs = DEFAULT_MARK_SWEEP_MS): MarkSweeper {
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const schedule = (ms: number): void => {
    if (stopped || Date.now() + ms >= dueAt) return;
    clearTimeout(timer);
    dueAt = Date.now() + ms;
    timer = setTimeout(run, ms);
  };
  const run = (): void => {
    dueAt = Infinity;
    running = sweepMarks(d)
      .then(
        () => undefined,
        (err: unknown) =>
          d.log.warn('cordon mark sweep failed; trying again later', {
            error: err instanceof Error ? err.message : String(err),
          }),
      )
      .finally(() => {
        running = undefined;
        schedule(again ? SOON_MS : intervalMs);
        again = false;
      });
  };
  run();
  return {
    soon: () => {
      if (running !== undefined) again = true;
      else schedule(SOON_MS);
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
