// The operator's caches (AITask v2, and one per target kind: Deployments, StatefulSets) as
// assembly.ts builds them: what each keeps (trim.ts), its share of the one memory ledger
// derived from the process's memory limit (runtime/memory-ledger.ts), what it refuses and how
// a refusal and a failing watch are logged, and which AITasks each change puts on the work
// queue. The work a change causes is paid by the namespace of the object that changed: every
// key it queues for another task goes through that namespace's event bucket
// (WorkQueue.addEvent), so one namespace's objects never make another's tasks reconcile faster
// than its own pace allows (scripts/security/inventory-fanout.ts lists each handler's keys and
// pace).

import { APPROVE_ANNOTATION } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { AITaskClient } from '../api/aitask-client.ts';
import { namespaceOf } from '../lib/keys.ts';
import { pageSizeFor, ResourceClient } from '../lib/kube/resources.ts';
import { KindDiscovery } from '../lib/kube/discovery.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import type { Logger } from '../lib/log.ts';
import { LogOnce } from '../lib/log-once.ts';
import { getHeapStatistics } from 'node:v8';
import { mayTarget } from './decision/caps.ts';
import type { Refusal } from './runtime/cache-budget.ts';
import { FAILING_AFTER, Informer, objectKey, type KubeObject } from './runtime/informer.ts';
import type { Workload } from './runtime/kinds.ts';
import {
  chargeBounds,
  ledgerCharge,
  memoryBasis,
  type ChargeBounds,
  type LedgerShare,
} from './runtime/memory-ledger.ts';
import { perKind, TARGET_KINDS } from './runtime/target-kinds.ts';
import {
  selectorRefusal,
  TASK_PAGE_SIZE,
  trimCustomObject,
  trimWorkload,
  WORKLOAD_KEYS,
} from './runtime/trim.ts';
import { TASK_CACHE_SHARE, TASK_KEYS } from './task-cache-share.ts';
import type { WorkQueue } from './runtime/workqueue.ts';
import { ScaleTargets } from './scale-targets.ts';
import { TargetCaches, targetIndexKey, taskTargetIndexKey } from './target-caches.ts';

/** The caches the reconciler reads. */
export interface Caches {
  readonly taskCache: Informer<v2.AITask>;
  readonly targets: TargetCaches;
  /** What discovery found of the kinds read through /scale and of the owners on their pods' chains. */
  readonly discovery: KindDiscovery;
  /** Every cache by its resource's plural (aitasks, deployments, statefulsets): what start, readiness, health and the cache metrics go through. */
  readonly all: Readonly<Record<string, CacheView>>;
}

/** What starting, syncing, health and the cache metrics read of each cache. */
export type CacheView = Pick<
  Informer<KubeObject>,
  'start' | 'stop' | 'waitForSettled' | 'settled' | 'failing' | 'size' | 'bytes' | 'refusedBy'
>;

/** Every cache by its resource's plural (aitasks, deployments, statefulsets). */
function everyCache(
  taskCache: Informer<v2.AITask>,
  targets: TargetCaches,
): Readonly<Record<string, CacheView>> {
  const out: Record<string, CacheView> = { aitasks: taskCache };
  for (const rules of Object.values(TARGET_KINDS)) out[rules.resource.plural] = targets.byKind[rules.kind];
  return out;
}

/** What the caches are built from; `onTaskDeleted` runs after a deleted AITask's keys are queued. */
export interface CacheDeps {
  readonly tasks: AITaskClient;
  readonly transport: KubeTransport;
  readonly queue: WorkQueue;
  readonly log: Logger;
  readonly namespace?: string;
  readonly watchLabelSelector?: string;
  /** `--allow-cross-namespace`: whether a task may act on a target in another namespace (mayTarget). */
  readonly allowCrossNamespace: boolean;
  readonly onTaskDeleted: () => void;
}

/** The AITask index of targets: the kind and namespace/name each task targets. */
function targetKeys(task: v2.AITask): string[] {
  return [taskTargetIndexKey(task)];
}

/**
 * True when an AITask update needs a reconcile now: a spec change, a deletion, or finalizer
 * changes while deleting. Status writes and the operator's own finalizer patch do not; a
 * finalizer removed by someone else is put back at the next interval.
 */
export function needsReconcile(oldT: v2.AITask, newT: v2.AITask): boolean {
  const a = oldT.metadata;
  const b = newT.metadata;
  return (
    a.generation !== b.generation ||
    a.annotations?.[APPROVE_ANNOTATION] !== b.annotations?.[APPROVE_ANNOTATION] ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    (b.deletionTimestamp !== undefined && (a.finalizers ?? []).join() !== (b.finalizers ?? []).join())
  );
}

/**
 * A watch that fails once or twice is an apiserver restarting or warming its watch cache
 * ("storage is (re)initializing"), which the informer rides out: said as a reconnect at info,
 * not as a failure (client-go's reflector logs those at V(4)). From FAILING_AFTER failures in
 * a row on, the cache serves stale data and each retry is a warning that the watch failed.
 */
function onError(log: Logger, kind: string) {
  return (err: unknown, failuresInARow: number): void => {
    const fields = { resource: kind, error: (err as Error).message, failuresInARow };
    if (failuresInARow >= FAILING_AFTER) log.warn('watch failed, reconnecting', fields);
    else log.info('watch reconnecting', fields);
  };
}

/**
 * The memory ledger of this process, in heap charge: LEDGER_FRACTION of the smaller of V8's
 * heap limit and the container's memory limit (~97 MiB under the shipped 384 Mi).
 */
function processLedger(): number {
  return ledgerCharge(memoryBasis(getHeapStatistics().heap_size_limit, process.constrainedMemory()));
}

/** `share` as an operator watching `namespace` gives it: the whole cache's share to its one namespace. */
function scoped(share: LedgerShare, namespace: string | undefined): LedgerShare {
  return namespace === undefined ? share : { ...share, namespace: 1 };
}

/**
 * Caches keep only what the operator reads (trim.ts) and hold what fits their share of the
 * ledger (`bounds`); a refused object is counted by the informer and logged once per object
 * and reason a minute (LogOnce), the next line saying how many sightings it stands for.
 */
function bounded(
  log: Logger,
  kind: string,
  bounds: ChargeBounds,
  then?: (obj: KubeObject) => void,
): ChargeBounds & { onRefused: (o: KubeObject, n: number, r: Refusal) => void } {
  const once = new LogOnce();
  return {
    ...bounds,
    onRefused: (obj, charge, refusal) => {
      then?.(obj);
      const key = objectKey(obj);
      const verdict = once.check(key, refusal.reason);
      if (!verdict.log) return;
      const fields = { resource: kind, key, charge, suppressed: verdict.suppressed };
      if (refusal.reason === 'TooLarge')
        log.warn('object too large to cache; ignored until it shrinks', {
          ...fields,
          maxCharge: bounds.maxObjectCharge,
        });
      else
        log.warn('object not cached; ignored until it changes', {
          ...fields,
          reason: refusal.reason,
          why: refusal.message,
        });
    },
  };
}

/** Builds the caches and wires their changes to the work queue. */
export function buildCaches(d: CacheDeps): Caches {
  const { log, queue } = d;
  const scope = d.namespace !== undefined ? { namespace: d.namespace } : {};
  const ledger = processLedger();
  const taskCache = new Informer<v2.AITask>(d.tasks, {
    ...scope,
    ...(d.watchLabelSelector !== undefined ? { labelSelector: d.watchLabelSelector } : {}),
    indexers: { target: targetKeys },
    transform: trimCustomObject([APPROVE_ANNOTATION]),
    ...bounded(log, 'aitasks', chargeBounds(ledger, scoped(TASK_CACHE_SHARE, d.namespace))),
    sharedKeys: TASK_KEYS,
    pageSize: TASK_PAGE_SIZE,
    onError: onError(log, 'aitasks'),
    // The CRD may come after the operator (npm start installs it once the hosted webhook
    // answers; an install can race it): wait for it quietly, saying so once.
    onNotServed: () =>
      log.info('waiting for the AITask CRD to be served (aitasks.aiops.example.com v2)', {
        resource: 'aitasks',
      }),
  });
  const discovery = new KindDiscovery(d.transport);
  const targets = new TargetCaches(
    perKind((kind) => targetCache(d, kind, taskCache, ledger)),
    new ScaleTargets(d.transport, discovery),
  );
  const mayAct = (t: v2.AITask): boolean => mayTarget(t, d.allowCrossNamespace);
  // The other tasks whose evaluation a task's going may change: the owner of a target is the
  // oldest task that may act on it (decision/caps.ts targetOwner), so only a task that may act
  // on its target can pass it on, and only to a task that may act on it too.
  const sameTarget = (t: v2.AITask): string[] =>
    mayAct(t)
      ? taskCache.byIndex('target', taskTargetIndexKey(t)).filter((k) => {
          const other = taskCache.get(k);
          return k !== objectKey(t) && other !== undefined && mayAct(other);
        })
      : [];
  taskCache.on({
    // A task's first sight (its creation, the first list, or a refused task shrunk back
    // under the limit) is reconciled at once: it queues only its own key, each one takes a
    // write by its namespace's owner, and the fair share of workers bounds what it costs others.
    add: (t) => queue.add(objectKey(t)),
    // Its own key, through its own namespace's bucket: a patch loop is paced.
    update: (a, b) => {
      if (needsReconcile(a, b)) queue.addEvent(objectKey(b));
    },
    // A deleted task, or one refused as too large (the cache drops it as deleted): its own key
    // at once (the reconcile only forgets its state, no request), the others on its target
    // through the deleted task's namespace's bucket.
    delete: (t) => {
      queue.add(objectKey(t));
      const charged = namespaceOf(objectKey(t));
      for (const key of sameTarget(t)) queue.addEvent(key, charged);
      d.onTaskDeleted();
    },
  });
  return { taskCache, targets, discovery, all: everyCache(taskCache, targets) };
}

/**
 * The cache of the targets of `kind`: pages whose worst case fits the heap, a selector no
 * larger than a real one, and a share of the ledger in all and per namespace (target-kinds.ts); a
 * refused object is said in the status of the AITasks that target it (observe.ts), which are
 * reconciled through the object's namespace's bucket; so is a kind the operator may not list
 * (onForbidden). An added, deleted or refused target, or a change of its replicas, reconciles
 * the AITasks that name it and may act on it (a task refused as cross-namespace never reads
 * it), paced by the target's namespace's bucket: its own namespace's tasks first.
 */
function targetCache(
  d: CacheDeps,
  kind: v2.TargetKind,
  taskCache: Informer<v2.AITask>,
  ledger: number,
): Informer<Workload> {
  const rules = TARGET_KINDS[kind];
  const plural = rules.resource.plural;
  const enqueueTasksOf = (obj: KubeObject): void => {
    const charged = obj.metadata.namespace ?? '';
    const keys = taskCache.byIndex('target', targetIndexKey(kind, objectKey(obj))).filter((k) => {
      const task = taskCache.get(k);
      return task !== undefined && mayTarget(task, d.allowCrossNamespace);
    });
    const own = (k: string): boolean => namespaceOf(k) === charged;
    for (const key of [...keys.filter(own), ...keys.filter((k) => !own(k))]) d.queue.addEvent(key, charged);
  };
  const cache = new Informer<Workload>(new ResourceClient(d.transport, rules.resource), {
    ...(d.namespace !== undefined ? { namespace: d.namespace } : {}),
    transform: trimWorkload(kind),
    admit: (w) => selectorRefusal(w.spec?.selector),
    ...bounded(d.log, plural, chargeBounds(ledger, scoped(rules.share, d.namespace)), enqueueTasksOf),
    sharedKeys: WORKLOAD_KEYS,
    pageSize: pageSizeFor(rules.pageBytes),
    onError: onError(d.log, plural),
    // An admin may leave a kind out of the operator's ClusterRole: the operator then runs
    // without it, and the AITasks that target it say the missing grant (observe.ts).
    onForbidden: (err) =>
      d.log.warn('not allowed to list and watch a target kind; its AITasks report TargetRefused', {
        resource: plural,
        group: rules.resource.group,
        error: err.message,
      }),
  });
  cache.on({
    add: enqueueTasksOf,
    delete: enqueueTasksOf,
    update: (a, b) => {
      if (a.spec?.replicas !== b.spec?.replicas) enqueueTasksOf(b);
    },
  });
  return cache;
}
