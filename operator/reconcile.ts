// reconcile(key) for one AITask, level-triggered and idempotent: read the cached object →
// finalizer cleanup on deletion → ensure the finalizer → phase Pending on first sight →
// settle a decision an earlier run left in flight (verify its effect) → record the spec
// revision → clamp the spec to the schema's bounds (a stored out-of-bounds value never makes
// it hot-loop) → resolve the target (one AITask per workload) → read the metric (a tenant's
// query confined to the target's namespace) → decide (pure) → approval → the gates
// (preflight.ts: remediation slots, LLM advice, the pod/node within the cordon cap; a selector
// its owner wrote that no request can carry is TargetInvalid, never a reconcile error) →
// write the decision → act → write the outcome → requeue after intervalSeconds. An unchanged
// status writes nothing and records no Event. A deadline (reconcile-deadline.ts) frees the
// worker; off-interval calls are paid from the namespace's budget (reconcile-budget.ts) or
// answered from task-memory.ts; approval-writes.ts answers the approval annotation.

import { isDeepStrictEqual } from 'node:util';
import type { AITaskClient } from '../api/aitask-client.ts';
import { findCondition, metaTime } from '../api/status/conditions.ts';
import { boundStatus } from '../api/status/bounded.ts';
import { APPROVE_ANNOTATION, FINALIZER } from '../api/install.ts';
import type { Logger } from '../lib/log.ts';
import { targetNamespace } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import { applyApproval } from './decision/approval.ts';
import type { Prepared } from './edges/actions.ts';
import { mayTarget } from './decision/caps.ts';
import { boundRequeue, brokenRules, clampSpec } from './decision/clamp.ts';
import { decide } from './decision/decide.ts';
import type { History } from './edges/history.ts';
import type { Result } from './runtime/controller.ts';
import type { Informer } from './runtime/informer.ts';
import type { Workload } from './runtime/kinds.ts';
import { isInFlight, settleDecision, verifyEffect, type Verification } from './decision/settle.ts';
import { firstSight } from './decision/first-sight.ts';
import { evaluate, type Evaluation, type EvaluationExtra } from './decision/evaluate.ts';
import { recordOutcome, withCooldown, type Observed } from './decision/outcome.ts';
import type { EventSpec } from './decision/vocabulary.ts';
import type { Telemetry } from './telemetry.ts';
import type { ActionGate } from './action-gate.ts';
import { terminalStatus } from './decision/terminal-status.ts';
import { TERMINAL_RETRY_MS, terminalFailure, type TerminalFailure } from './runtime/terminal.ts';
import { finalizeTask } from './finalize.ts';
import type { MetricReader } from './edges/prometheus.ts';
import { observeTarget } from './observe.ts';
import { TargetInvalidError } from './edges/target-invalid.ts';
import { Deferred, ReconcileBudget } from './reconcile-budget.ts';
import { TaskMemory } from './task-memory.ts';
import { answerApproval } from './approval-writes.ts';
import { DeadlineExceeded, ReconcileDeadline, type Run } from './reconcile-deadline.ts';
import type { QueryBounds } from './decision/query-cost.ts';
import { gateVerdict, type PreflightDeps } from './preflight.ts';
import type { TargetReader } from './target-caches.ts';

/** Everything reconcile reads from and writes to (with what its preflight reads). */
export interface ReconcilerDeps extends PreflightDeps {
  readonly tasks: AITaskClient;
  readonly taskCache: Informer<v2.AITask>;
  /** The targets: the workload each task names, cached or through /scale (target-caches.ts). */
  readonly targets: TargetReader;
  /** Prometheus, or NO_PROMETHEUS when the operator has no URL. */
  readonly prometheus: MetricReader;
  /**
   * Called with the keys of the tasks waiting for a remediation slot when one is freed
   * (RemediationSlots `sync`, `forget`), so the caller requeues exactly those at once.
   */
  readonly onSlotFreed?: (waiting: readonly string[]) => void;
  readonly history: History;
  readonly telemetry: Telemetry;
  readonly log: Logger;
  /** Query used when `trigger.query` is empty; `{{namespace}}`/`{{name}}` are the target's. */
  readonly defaultQuery: string;
  /** Allow targets outside the AITask's namespace (default false: refused). */
  readonly allowCrossNamespace: boolean;
  /** Confine `trigger.query` to the target's namespace (`--confine-queries`, default true). */
  readonly confineQueries: boolean;
  /** Cost bounds on `trigger.query` (`--max-query-range`, `--min-query-resolution`; default DEFAULT_QUERY_BOUNDS). */
  readonly queryBounds?: QueryBounds;
  /** Clock in ms (default Date.now). */
  readonly now?: () => number;
  /** Id for a new decision (default random UUID). */
  readonly newId?: () => string;
  /**
   * Asked right before the decision is written, right before the action and right after it,
   * and right before the finalizer's cleanup (action-gate.ts); false stops the remediation or
   * the cleanup there. Default: always go on.
   */
  readonly gate?: ActionGate;
  /** What reconciles off their tasks' intervals may spend per namespace (default: a new ReconcileBudget, 60 calls a minute, 20 at once). */
  readonly budget?: ReconcileBudget;
  /** Deadline of a reconcile before it acts, in ms (default RECONCILE_DEADLINE_MS, 10 s). */
  readonly reconcileDeadlineMs?: number;
}

/** The reconciler of AITasks. */
export class Reconciler {
  readonly #d: ReconcilerDeps;
  /** Keys of the tasks whose last status this reconciler decided has Stalled=True. */
  readonly #stalled = new Set<string>();
  readonly #memory: TaskMemory;

  constructor(deps: ReconcilerDeps) {
    this.#d = deps;
    this.#memory = new TaskMemory(deps.budget ?? new ReconcileBudget());
  }

  /**
   * Reconciles the AITask `namespace/name`. Throws on API errors a retry may fix (the
   * controller retries with backoff); one that no retry can fix (runtime/terminal.ts) is
   * recorded on the task as Stalled instead and tried again after TERMINAL_RETRY_MS (10 min)
   * or on the next spec change. Past its deadline (reconcileDeadlineMs) before acting it
   * throws DeadlineExceeded (retried with backoff); off its task's interval with its
   * namespace's budget spent it does nothing and comes back when a token is due.
   */
  async reconcile(key: string): Promise<Result> {
    const deadline = new ReconcileDeadline(this.#d.reconcileDeadlineMs);
    try {
      return await deadline.run(this.#reconcile(key, deadline));
    } catch (err) {
      if (err instanceof Deferred) return { requeueAfterMs: err.waitMs };
      if (err instanceof DeadlineExceeded) this.#memory.overran(key, (this.#d.now ?? Date.now)(), err.ms);
      const failure = terminalFailure(err);
      if (failure === undefined) throw err;
      return this.#stall(key, failure);
    }
  }

  /** Writes the stalled status (nothing when it is already there) and its Event; a failing write throws. */
  async #stall(key: string, failure: TerminalFailure): Promise<Result> {
    const d = this.#d;
    const task = d.taskCache.get(key);
    if (task === undefined) return {};
    const stalled = terminalStatus(task, failure, TERMINAL_RETRY_MS, (d.now ?? Date.now)());
    this.#judged(key, stalled.status);
    if (!isDeepStrictEqual(task.status ?? {}, stalled.status))
      await this.#writeStatus(task, stalled.status, stalled.events, d.log.with({ key }));
    d.log.error('reconcile stalled; no retry can fix this', { key, ...failure });
    return { requeueAfterMs: TERMINAL_RETRY_MS };
  }

  async #reconcile(key: string, deadline: ReconcileDeadline): Promise<Result> {
    const d = this.#d;
    const cached = d.taskCache.get(key);
    if (!cached) {
      this.#forget(key);
      return {};
    }
    const log = d.log.with({ key });
    const [namespace = '', name = ''] = key.split('/');
    if (cached.metadata.deletionTimestamp !== undefined) {
      deadline.commit(); // the cleanup is bounded by its own 30 s (finalize.ts), never cut
      await finalizeTask(d, cached, log);
      this.#forget(key);
      return {};
    }
    // A spec the apiserver would refuse at v2 (a value conversion let through) is never acted on.
    const broken = brokenRules(cached.spec);
    if (broken.length > 0)
      return this.#stall(key, {
        reason: 'Invalid',
        message: `the spec breaks its schema's rules: ${broken.join('; ')}`,
      });
    const spend = this.#memory.spend(key, namespace, (d.now ?? Date.now)());
    let task = cached;
    if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) {
      spend.must();
      deadline.check();
      task = await d.tasks.addFinalizer(namespace, name, FINALIZER, task);
      log.info('finalizer added');
    }
    const seeded = firstSight(task.status, metaTime(new Date((d.now ?? Date.now)())));
    // On first sight the Pending status is written while the evaluation reads its inputs
    // (#evaluate awaits both before deciding); a failed write fails the reconcile all the same.
    const seeding =
      seeded === undefined
        ? undefined
        : this.#writeStatus(task, seeded, [], log, deadline).then((written) => {
            log.info('status updated', { phase: seeded.phase });
            return written;
          });
    seeding?.catch(() => undefined);
    let acted = false;
    try {
      if (seeding === undefined && isInFlight(task.status?.pendingDecision)) {
        spend.must(2);
        task = await this.#settle(await d.tasks.get(namespace, name), log, deadline);
      }
      const out = await this.#evaluate(key, task, log, { spend, deadline }, seeding);
      task = out.task;
      acted = out.acted;
      return { requeueAfterMs: out.requeueAfterMs };
    } finally {
      this.#wake(d.slots.sync(task.metadata.uid ?? key, task.status, acted));
    }
  }

  /**
   * `seeding`: the first-sight status write in flight, whose answer is the task decided on.
   * `run.spend` pays the calls off the task's interval (Spend.must may throw Deferred before
   * anything is written); `run.deadline` is checked before each write.
   */
  async #evaluate(
    key: string,
    initial: v2.AITask,
    log: Logger,
    run: Run,
    seeding?: Promise<v2.AITask>,
  ): Promise<{ task: v2.AITask; requeueAfterMs: number; acted: boolean }> {
    const d = this.#d;
    const { spend, deadline } = run;
    let task: v2.AITask = { ...initial, spec: clampSpec(initial.spec) };
    const now = (d.now ?? Date.now)();
    const intervalMs = (task.spec.intervalSeconds ?? d.defaults.intervalSeconds) * 1000;
    const targetNs = targetNamespace(task);
    // A target the task may not read (another namespace, unless allowed) is not read at all.
    const lookup = mayTarget(task, d.allowCrossNamespace) ? await d.targets.read(task) : {};
    const workload = lookup.workload;
    const target = observeTarget(d, key, task, lookup);
    // A new generation's ControllerRevision is written while Prometheus answers (and, on first
    // sight, while the Pending status is written): none needs another, so a new AITask costs
    // two sequential round trips less.
    const newGeneration = initial.status?.observedGeneration !== initial.metadata.generation;
    if (newGeneration) spend.must();
    const [seededTask, , { metric, fresh }] = await Promise.all([
      seeding,
      newGeneration ? d.history.record(initial) : undefined,
      this.#memory.metric(d, key, task, target, targetNs, spend, deadline.signal),
    ]);
    if (seededTask !== undefined) task = { ...seededTask, spec: task.spec };
    // The target's UID binds a decision and its approval to the object the approver saw.
    const targetUID = workload?.metadata.uid;
    const approval = applyApproval(task, decide(task, target, metric, now, d.defaults), targetUID);
    const approved: EvaluationExtra = {
      ...(targetUID !== undefined ? { targetUID } : {}),
      ...(approval.approvedId !== undefined
        ? { decisionId: approval.approvedId, note: `approved (${APPROVE_ANNOTATION})` }
        : {}),
    };
    const gates = { workload, metric, now, run, reread: fresh };
    const { verdict, prepared, extra } = await gateVerdict(d, key, task, approval.verdict, approved, gates);
    if (verdict.kind === 'blocked' || verdict.kind === 'targetMissing')
      d.telemetry.refusals.inc({ reason: verdict.kind === 'blocked' ? verdict.blockedBy : verdict.reason });
    const events = approval.ignored ? [...(extra.events ?? []), approval.ignored] : extra.events;
    const all: EvaluationExtra = { ...extra, ...(events !== undefined ? { events } : {}) };
    const ev = evaluate(task, verdict, now, (d.newId ?? (() => crypto.randomUUID()))(), intervalMs, all);
    this.#judged(key, ev.status);
    const unchanged = isDeepStrictEqual(task.status ?? {}, ev.status);
    if (ev.act === undefined || prepared === undefined || workload === undefined) {
      if (!unchanged) {
        spend.must(1 + ev.events.length);
        task = await this.#writeStatus(task, ev.status, ev.events, log, deadline);
        log.info('status updated', { phase: ev.status.phase, verdict: verdict.kind });
      }
    } else
      task = await this.#act(task, ev, ev.act, prepared, workload, { target, metric }, intervalMs, log, run);
    const w = { tasks: d.tasks, events: d.events, memory: this.#memory, ...run };
    const removeIn = await answerApproval(w, key, task, approval, unchanged && ev.act === undefined);
    const requeue = this.#memory.due(
      key,
      spend.due || fresh,
      now,
      boundRequeue(ev.requeueAfterMs, intervalMs),
    );
    const acted = ev.act !== undefined && prepared !== undefined && workload !== undefined;
    // An action's effect is the operator's own to look at: the reconcile it triggers is due.
    if (acted) this.#memory.wake(key);
    return { task, requeueAfterMs: boundRequeue(Math.min(requeue, removeIn ?? Infinity), intervalMs), acted };
  }

  /**
   * Writes the decision (its pendingDecision is what a restarted operator settles), runs the
   * action, and writes the outcome, with the cooldown it starts (outcome.ts, withCooldown).
   */
  async #act(
    task: v2.AITask,
    ev: Evaluation,
    { decision, plan }: NonNullable<Evaluation['act']>,
    prepared: Prepared,
    workload: Workload,
    observed: Observed,
    intervalMs: number,
    log: Logger,
    { spend, deadline }: Run,
  ): Promise<v2.AITask> {
    const d = this.#d;
    const gate = d.gate ?? (() => Promise.resolve(true));
    if (!(await gate('before-decision', decision.id))) return task;
    spend.must(1 + ev.events.length);
    deadline.commit();
    const decided = await this.#writeStatus(task, ev.status, ev.events, log);
    if (!(await gate('before-action', decision.id))) return decided;
    log.info('acting', { action: plan.action, decision: decision.id, effect: decision.effect });
    let outcome;
    try {
      outcome = await d.actions.run(prepared, workload);
      await gate('after-action', decision.id);
    } catch (err) {
      outcome = {
        executed: false as const,
        blockedBy: 'ActionFailed' as const,
        message: `${plan.action} failed: ${(err as Error).message}`,
      };
    }
    d.telemetry.actions.inc({
      action: plan.action,
      outcome: outcome.executed ? 'executed' : outcome.blockedBy === 'ActionFailed' ? 'failed' : 'blocked',
    });
    const now = (d.now ?? Date.now)();
    const after = withCooldown(
      { ...decided, spec: task.spec },
      recordOutcome(decided, decided.status ?? {}, decision, plan, outcome, now),
      observed,
      now,
      d.defaults,
      intervalMs,
    );
    spend.must(2 + after.events.length);
    const recorded = await this.#writeStatus(decided, after.status, after.events, log);
    log.info('action finished', {
      action: plan.action,
      executed: outcome.executed,
      message: outcome.message,
    });
    return recorded;
  }

  /**
   * PUT of the status subresource, bound to `task`'s resourceVersion, cut to the CRD's
   * bounds (boundStatus) so the apiserver never refuses it as too long; then its Events.
   * Not once `deadline` (when given) has passed.
   */
  async #writeStatus(
    task: v2.AITask,
    status: v2.Status,
    events: readonly EventSpec[],
    log: Logger,
    deadline?: ReconcileDeadline,
  ): Promise<v2.AITask> {
    deadline?.check();
    const written = await this.#d.tasks.replaceStatus({ ...task, status: boundStatus(status) });
    this.#d.telemetry.statusWrites.inc();
    log.debug('status written', { resourceVersion: written.metadata.resourceVersion });
    await this.#d.events.record(task, events);
    return written;
  }

  /**
   * A decision in flight on the live object means an earlier run stopped mid-action: its
   * effect is verified, never blindly repeated (settle.ts). A target the task may not read
   * (another namespace without `--allow-cross-namespace`) is not read at all: the decision
   * is settled as not done, whatever the other namespace holds, so status says nothing of it.
   */
  async #settle(live: v2.AITask, log: Logger, deadline: ReconcileDeadline): Promise<v2.AITask> {
    const pending = live.status?.pendingDecision;
    if (live.status === undefined || !isInFlight(pending)) return live;
    let verification: Verification = 'notDone';
    if (mayTarget(live, this.#d.allowCrossNamespace)) {
      const { workload } = await this.#d.targets.read(live);
      const uid = live.metadata.uid ?? '';
      // A target whose pods cannot be listed (its owner's selector) shows nothing of them.
      const observed = await this.#d.actions.currentEffect(pending, workload, uid).catch((err: unknown) => {
        if (!(err instanceof TargetInvalidError)) throw err;
        return this.#d.actions.currentEffect(pending, undefined, uid);
      });
      verification = verifyEffect(pending, observed);
    }
    const settled = settleDecision(live.status, verification);
    if (!settled) return live;
    log.warn('settled an interrupted decision', {
      decision: pending.id,
      action: pending.action,
      verification,
    });
    return this.#writeStatus(live, settled.status, settled.events, log, deadline);
  }

  /**
   * How many tasks this reconciler last judged Stalled: the aiops_tasks_stalled gauge. Its own
   * verdicts only, so a Stalled condition a tenant writes into status moves no alert.
   */
  stalledCount(): number {
    return this.#stalled.size;
  }

  /** Records whether the status this reconciler decided for `key` says Stalled=True. */
  #judged(key: string, status: v2.Status): void {
    if (findCondition(status.conditions, 'Stalled')?.status === 'True') this.#stalled.add(key);
    else this.#stalled.delete(key);
  }

  /** Hands the keys a freed slot woke (if any) to `onSlotFreed`; each is due at once (the operator's own requeue). */
  #wake(waiting: readonly string[]): void {
    for (const key of waiting) this.#memory.wake(key);
    if (waiting.length > 0) this.#d.onSlotFreed?.(waiting);
  }

  #forget(key: string): void {
    this.#stalled.delete(key);
    this.#memory.forget(key);
    this.#wake(this.#d.slots.forget(key));
    this.#d.advisor.forget(key);
  }
}
