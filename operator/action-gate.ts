// The last check before the operator changes a workload: the reconcile asks it right before
// writing a decision, right before running the action and right after it, and right before
// the finalizer's cleanup (uncordoning). It answers "no"
// once this process no longer leads (judged by its own clock, see runtime/leader.ts), so a
// leader that was frozen or partitioned never acts on a decision it took before. It also
// holds the crash tests' hook: with AIOPS_TEST_PAUSE_AT set, the process stops at the named
// points inside the crash window and says so on its log, so a test can kill -9 it there
// deterministically instead of hoping a timed kill lands between decision and action.

import type { Logger } from '../lib/log.ts';

/** Where in one remediation the gate is asked. */
export type ActionPoint = 'before-decision' | 'before-action' | 'after-action' | 'before-cleanup';

const POINTS: readonly ActionPoint[] = ['before-decision', 'before-action', 'after-action', 'before-cleanup'];

/**
 * Test-only environment variable, read once at start and off by default: a comma-separated
 * list of ActionPoints (e.g. `before-action,after-action`) where every remediation pauses.
 * A paused reconcile logs `paused for a crash test` (fields `point`, `decision`) and waits
 * until the process receives SIGUSR2, which releases every paused reconcile at once.
 */
export const PAUSE_ENV = 'AIOPS_TEST_PAUSE_AT';

/**
 * Asked at each ActionPoint with the decision's id (the AITask's uid for `before-cleanup`);
 * resolves false when the remediation or cleanup must not go on.
 */
export type ActionGate = (point: ActionPoint, id: string) => Promise<boolean>;

/** Parses PAUSE_ENV's value; throws naming the unknown point. */
export function parsePausePoints(value: string | undefined): Set<ActionPoint> {
  const out = new Set<ActionPoint>();
  for (const raw of (value ?? '').split(',')) {
    const p = raw.trim();
    if (p === '') continue;
    const point = POINTS.find((x) => x === p);
    if (point === undefined)
      throw new Error(`${PAUSE_ENV}: unknown point "${p}" (one of ${POINTS.join(', ')})`);
    out.add(point);
  }
  return out;
}

/**
 * The gate: pauses at `pauseAt` (see PAUSE_ENV), then answers `leading()` for the points
 * before the action (after the action the outcome is recorded whoever leads, since it is
 * what happened).
 */
export function actionGate(
  leading: () => boolean,
  pauseAt: ReadonlySet<ActionPoint>,
  log: Logger,
): ActionGate {
  const waiting: (() => void)[] = [];
  if (pauseAt.size > 0)
    process.on('SIGUSR2', () => {
      for (const release of waiting.splice(0)) release();
    });
  return async (point, id) => {
    if (pauseAt.has(point)) {
      const released = new Promise<void>((r) => waiting.push(r));
      log.warn('paused for a crash test', { point, decision: id, env: PAUSE_ENV });
      await released;
    }
    if (point === 'after-action' || leading()) return true;
    log.warn('not leading any more: the remediation stops here', { point, decision: id });
    return false;
  };
}
