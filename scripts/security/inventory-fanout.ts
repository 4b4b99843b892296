// The fan-out of every cache event handler: for each handler an Informer's changes call (each
// `.on({...})` registration, and each cache's `onRefused`), which work-queue keys it may queue
// and whose pace they take. A change is hostile input like any other: what it makes the
// operator do to other tasks must be paid by the namespace of the object that changed, never
// by another namespace's bucket and never unpaced. docs/security.md shows it as the inventory's
// fan-out column; inventory.test.ts checks it against the handlers scan.ts finds
// (scanHandlers), so a handler added without its fan-out, or one gone, fails CI.

/** One handler: the keys it may queue and the bucket that paces them. */
export interface FanOut {
  /** The handler as scanHandlers names it: `<file>: <cache>.on <event>`, or `<file>: onRefused`. */
  readonly handler: string;
  /** The input path (inventory id) whose objects' changes call it. */
  readonly path: string;
  /** The keys it may queue, and when. */
  readonly keys: string;
  /** How they are paced: which namespace's bucket, or why none. */
  readonly paced: string;
  /** Files that enforce it. */
  readonly enforcedIn: readonly string[];
  /** Test files that prove it. */
  readonly provedBy: readonly string[];
}

const CACHES = 'operator/assembly-caches.ts';
const QUEUE = 'operator/runtime/workqueue.ts';
const ATTACK = 'test/attacks/cross-namespace-fanout.test.ts';
const REFUSED_ATTACK = 'test/attacks/cross-namespace-refused-fanout.test.ts';
const QUEUE_TEST = 'operator/runtime/workqueue.test.ts';

/** Who a target change queues: the tasks naming the object that may act on it. */
const TASKS_OF_TARGET =
  'the AITasks naming this object (the task cache’s `target` index) that may act on it: its own namespace’s, others only with --allow-cross-namespace (a refused one never reads it)';

/** How a target change's keys are paced. */
const TARGET_PACE =
  'the bucket of the object’s namespace (--namespace-reconcile-qps, -burst), its own namespace’s tasks first; a key already queued or due sooner takes no token';

/** Every handler of every cache, by the site scanHandlers gives it. */
export const FAN_OUTS: readonly FanOut[] = [
  {
    handler: `${CACHES}: taskCache.on add`,
    path: 'aitasks',
    keys: 'the task’s own key, on its first sight: created, listed, or a refused task shrunk back under 64 KiB',
    paced:
      'at once: each add takes a write by its namespace’s owner, queues nothing of another namespace, and its reconcile holds at most the namespace’s fair share of the workers while another waits',
    enforcedIn: [CACHES, QUEUE],
    provedBy: [ATTACK, QUEUE_TEST],
  },
  {
    handler: `${CACHES}: taskCache.on update`,
    path: 'aitasks',
    keys: 'the task’s own key, when its generation, approval annotation, deletionTimestamp or (while deleting) finalizers changed; a status write queues nothing',
    paced: 'the bucket of the task’s namespace (--namespace-reconcile-qps, -burst)',
    enforcedIn: [CACHES, QUEUE],
    provedBy: ['test/attacks/shares.test.ts', QUEUE_TEST],
  },
  {
    handler: `${CACHES}: taskCache.on delete`,
    path: 'aitasks',
    keys: 'the task’s own key (its reconcile only forgets its state, no request); when the task may act on its target, the other tasks naming that target that may act on it (the owner may pass to one); and a cordon-mark sweep 1 s later (one at a time: sustained deletions keep it at about one sweep a second, whoever deletes). A task refused as too large is dropped as deleted and comes here too',
    paced:
      'own key at once; the other tasks through the bucket of the deleted task’s namespace, never at once, whatever namespace they are in',
    enforcedIn: [CACHES, QUEUE, 'operator/decision/caps.ts'],
    provedBy: [ATTACK, REFUSED_ATTACK, 'operator/guardrails.cluster.test.ts'],
  },
  {
    handler: `${CACHES}: cache.on add`,
    path: 'targets',
    keys: TASKS_OF_TARGET,
    paced: TARGET_PACE,
    enforcedIn: [CACHES, QUEUE],
    provedBy: [QUEUE_TEST, 'operator/operator.cluster.test.ts'],
  },
  {
    handler: `${CACHES}: cache.on update`,
    path: 'targets',
    keys: `${TASKS_OF_TARGET}; only when spec.replicas changed`,
    paced: TARGET_PACE,
    enforcedIn: [CACHES, QUEUE],
    provedBy: [QUEUE_TEST, 'operator/operator.cluster.test.ts'],
  },
  {
    handler: `${CACHES}: cache.on delete`,
    path: 'targets',
    keys: TASKS_OF_TARGET,
    paced: TARGET_PACE,
    enforcedIn: [CACHES, QUEUE],
    provedBy: [QUEUE_TEST, 'operator/operator.cluster.test.ts'],
  },
  {
    handler: `${CACHES}: onRefused`,
    path: 'targets',
    keys: `a refused target (too large, its selector past the bound, its cache’s budget spent): ${TASKS_OF_TARGET}, so their status says why; a refused AITask: nothing here (it is dropped as deleted: taskCache.on delete)`,
    paced: TARGET_PACE,
    enforcedIn: [CACHES, QUEUE, 'operator/runtime/informer.ts'],
    provedBy: ['test/attacks/other-kinds.test.ts', ATTACK],
  },
];

/** The fan-out cell of input path `id`: each of its handlers' keys and pace; `none` without one. */
export function fanOutOf(id: string): string {
  const of = FAN_OUTS.filter((f) => f.path === id);
  if (of.length === 0) return 'none: no cache handler hears it';
  return of
    .map((f) => `**${f.handler.slice(f.handler.indexOf(': ') + 2)}**: ${f.keys}; paced: ${f.paced}.`)
    .join(' ');
}
