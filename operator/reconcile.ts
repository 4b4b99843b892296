// reconcile(key) for one AITask, level-triggered and idempotent: read the cached object →
// finalizer cleanup on deletion → ensure the finalizer → phase Pending on first sight →
// settle a decision an earlier run left in flight (verify its effect) → record the spec
// revision → clamp the spec to the schema's bounds (a stored out-of-bounds value never makes
// it hot-loop) → resolve the target (one AITask per workload) → read the metric (a tenant's
// query confined to the target's namespace) → decide (pure) → approval → preflight
// (remediation slots, LLM advice, resolving the pod/node within the cordon cap) → write the
// decision → act → write the outcome → requeue after intervalSeconds. A target whose owner
// wrote a selector no request can carry is the task's TargetInvalid verdict, never a reconcile
// error (edges/target-invalid.ts). When the computed status equals the stored one nothing is
// written and no Event is recorded. The observations are observe.ts, the checks before acting
// preflight.ts, the deletion cleanup finalize.ts.

import { isDeepStrictEqual } from 'node:util';
import type { AITaskClient } from '../api/aitask-client.ts';
import { NotFoundError } from '../lib/kube/errors.ts';
import { findCondition, metaTime } from '../api/status/conditions.ts';
import { boundStatus } from '../api/status/bounded.ts';
import { APPROVE_ANNOTATION, FINALIZER } from '../api/install.ts';
import type { Logger } from '../lib/log.ts';
import { targetNamespace } from '../api/schema/target.ts';
import type * as v2 from '../api/schema/v2.ts';
import { withDeadline } from '../lib/deadline.ts';
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
import { invalidTarget, observeMetric, observeTarget } from './observe.ts';
import { TargetInvalidError } from './edges/target-invalid.ts';
import type { QueryBounds } from './decision/query-cost.ts';
import { choiceToApprove, preflight, type PreflightDeps } from './preflight.ts';
import type { TargetReader } from './target-caches.ts';

/**
 * Longest a Prometheus query holds a worker, in ms: the client's own 5 s per-query timeout
 * (edges/prometheus.ts) plus a second, so a server that dribbles its answer byte by byte
 * cannot keep the worker either.
 */
export const PROMETHEUS_DEADLINE_MS = 6_000;

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
}

/** The reconciler of AITasks. */
export class Reconciler {
  readonly #d: ReconcilerDeps;
  /** Keys of the tasks whose last status this reconciler decided has Stalled=True. */
  readonly #stalled = new Set<string>();

  constructor(deps: ReconcilerDeps) {
    this.#d = deps;
  }

  /**
   * Reconciles the AITask `namespace/name`. Throws on API errors a retry may fix (the
   * controller retries with backoff); one that no retry can fix (runtime/terminal.ts) is
   * recorded on the task as Stalled instead and tried again after TERMINAL_RETRY_MS (10 min)
   * or on the next spec change.
   */
  async reconcile(key: string): Promise<Result> {
    try {
      return await this.#reconcile(key);
    } catch (err) {
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

  async #reconcile(key: string): Promise<Result> {
    const d = this.#d;
    const cached = d.taskCache.get(key);
    if (!cached) {
      this.#forget(key);
      return {};
    }
    const log = d.log.with({ key });
    const [namespace = '', name = ''] = key.split('/');
    if (cached.metadata.deletionTimestamp !== undefined) {
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
    let task = cached;
    if (!(task.metadata.finalizers ?? []).includes(FINALIZER)) {
      task = await d.tasks.addFinalizer(namespace, name, FINALIZER, task);
      log.info('finalizer added');
    }
    const seeded = firstSight(task.status, metaTime(new Date((d.now ?? Date.now)())));
    // On first sight the Pending status is written while the evaluation reads its inputs
    // (#evaluate awaits both before deciding); a failed write fails the reconcile all the same.
    const seeding =
      seeded === undefined
        ? undefined
        : this.#writeStatus(task, seeded, [], log).then((written) => {
            log.info('status updated', { phase: seeded.phase });
            return written;
          });
    seeding?.catch(() => undefined);
    let acted = false;
    try {
      if (seeding === undefined && isInFlight(task.status?.pendingDecision))
        task = await this.#settle(await d.tasks.get(namespace, name), log);
      const out = await this.#evaluate(key, task, log, seeding);
      task = out.task;
      acted = out.acted;
      return { requeueAfterMs: out.requeueAfterMs };
    } finally {
      this.#wake(d.slots.sync(task.metadata.uid ?? key, task.status, acted));
    }
  }

  /** `seeding`: the first-sight status write in flight, whose answer is the task decided on. */
  async #evaluate(
    key: string,
    initial: v2.AITask,
    log: Logger,
    seeding?: Promise<v2.AITask>,
  ): Promise<{ task: v2.AITask; requeueAfterMs: number; acted: boolean }> {
    const d = this.#d;
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
    const [seededTask, , metric] = await Promise.all([
      seeding,
      initial.status?.observedGeneration !== initial.metadata.generation
        ? d.history.record(initial)
        : undefined,
      withDeadline(observeMetric(d, task, target, targetNs), PROMETHEUS_DEADLINE_MS, () => ({
        ok: false as const,
        reason: 'MetricsUnavailable' as const,
        message: `Prometheus did not answer within ${PROMETHEUS_DEADLINE_MS / 1000}s`,
      })),
    ]);
    if (seededTask !== undefined) task = { ...seededTask, spec: task.spec };
    // The target's UID binds a decision and its approval to the object the approver saw.
    const targetUID = workload?.metadata.uid;
    const approval = applyApproval(task, decide(task, target, metric, now, d.defaults), targetUID);
    let verdict = approval.verdict;
    let extra: EvaluationExtra = {
      ...(targetUID !== undefined ? { targetUID } : {}),
      ...(approval.approvedId !== undefined
        ? { decisionId: approval.approvedId, note: `approved (${APPROVE_ANNOTATION})` }
        : {}),
    };
    let prepared: Prepared | undefined;
    try {
      if (verdict.kind === 'blocked' && verdict.blockedBy === 'AwaitingApproval' && workload !== undefined)
        extra = await choiceToApprove(d.actions, task, verdict.plan, workload, extra);
      if (verdict.kind === 'act' && workload !== undefined)
        ({ verdict, extra, prepared } = await preflight(d, key, task, verdict, workload, extra, now));
    } catch (err) {
      // What the target's owner wrote (a selector no LIST can carry) is said in this task's
      // status like any other verdict, and evaluated again at the interval: not a reconcile error.
      if (!(err instanceof TargetInvalidError)) throw err;
      verdict = decide(task, invalidTarget(task, err), metric, now, d.defaults);
      prepared = undefined;
    }
    if (verdict.kind === 'blocked' || verdict.kind === 'targetMissing')
      d.telemetry.refusals.inc({ reason: verdict.kind === 'blocked' ? verdict.blockedBy : verdict.reason });
    if (approval.ignored) extra = { ...extra, events: [...(extra.events ?? []), approval.ignored] };
    const ev = evaluate(task, verdict, now, (d.newId ?? (() => crypto.randomUUID()))(), intervalMs, extra);
    this.#judged(key, ev.status);

    if (ev.act === undefined || prepared === undefined || workload === undefined) {
      if (!isDeepStrictEqual(task.status ?? {}, ev.status)) {
        task = await this.#writeStatus(task, ev.status, ev.events, log);
        log.info('status updated', { phase: ev.status.phase, verdict: verdict.kind });
      } else if (approval.ignored) await d.events.record(task, [approval.ignored]);
    } else task = await this.#act(task, ev, ev.act, prepared, workload, { target, metric }, intervalMs, log);
    if (approval.consume) await this.#consumeApproval(task);
    return {
      task,
      requeueAfterMs: boundRequeue(ev.requeueAfterMs, intervalMs),
      acted: ev.act !== undefined && prepared !== undefined && workload !== undefined,
    };
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
  ): Promise<v2.AITask> {
    const d = this.#d;
    const gate = d.gate ?? (() => Promise.resolve(true));
    if (!(await gate('before-decision', decision.id))) return task;
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
   */
  async #writeStatus(
    task: v2.AITask,
    status: v2.Status,
    events: readonly EventSpec[],
    log: Logger,
  ): Promise<v2.AITask> {
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
  async #settle(live: v2.AITask, log: Logger): Promise<v2.AITask> {
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
    return this.#writeStatus(live, settled.status, settled.events, log);
  }

  /** Removes the approval annotation (merge patch; the object may be gone). */
  async #consumeApproval(task: v2.AITask): Promise<void> {
    await this.#d.tasks
      .patch(task.metadata.namespace, task.metadata.name ?? '', {
        metadata: { annotations: { [APPROVE_ANNOTATION]: null } },
      })
      .catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
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

  /** Hands the keys a freed slot woke (if any) to `onSlotFreed`. */
  #wake(waiting: readonly string[]): void {
    if (waiting.length > 0) this.#d.onSlotFreed?.(waiting);
  }

  #forget(key: string): void {
    this.#stalled.delete(key);
    this.#wake(this.#d.slots.forget(key));
    this.#d.advisor.forget(key);
  }
}
