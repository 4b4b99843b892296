// The `before` and `after` hooks most attack files share, registered by one call: start the
// stage (stage.ts), then alice's bystander task, and stop what was started afterwards. The
// stage is handed back at once as a stand-in that reaches the started one, so a file's tests
// read `stage.mallory` as before; reading it before the `before` hook ran, or after it failed,
// throws saying so.

import { after, before } from 'node:test';
import { bystander, startStage, stopStarted, type Stage, type StageOptions } from './stage.ts';

/** How a file wants its stage, and what it does before alice's bystander task starts. */
export interface UseStageOptions extends StageOptions {
  /** Start alice's bystander task (default true); without it `undisturbed` throws. */
  readonly bystander?: boolean;
  /** Runs in the `before` hook once the stage is up, before the bystander task starts. */
  readonly setup?: (stage: Stage) => Promise<void> | void;
}

/** The stage of one attack file and its bystander check. */
export interface UsedStage {
  /** The started stage; throws on any property read before it started. */
  readonly stage: Stage;
  /**
   * Alice's bystander check (stage.ts `bystander`): the operator still runs, nothing outside
   * mallory's namespace changed, and alice's next change is observed within `withinMs`
   * (default 15 000).
   */
  readonly undisturbed: (withinMs?: number) => Promise<void>;
}

/**
 * Registers the file's hooks: `before` starts the stage with `opts`, runs `opts.setup`, then
 * (unless `bystander: false`) starts alice's bystander task; `after` stops the stage if it
 * started (stopStarted: a `before` that failed part-way stopped what it had started itself).
 * Call once, at the top level of a test file. What the file's tests need on the started stage
 * goes in `opts.setup`, never in a `before` of the file's own: node:test does not wait for this
 * hook's stage before running another root-level `before`.
 */
export function useStage(opts: UseStageOptions = {}): UsedStage {
  let started: Stage | undefined;
  let check: ((withinMs?: number) => Promise<void>) | undefined;
  before(async () => {
    const stage = await startStage(() => undefined, opts);
    started = stage;
    await opts.setup?.(stage);
    if (opts.bystander ?? true) check = await bystander(stage);
  });
  after(async () => {
    await stopStarted(started);
  });
  const stage = new Proxy({} as Stage, {
    get(_target, property) {
      if (started === undefined) throw new Error(`the stage is not started (reading ${String(property)})`);
      return Reflect.get(started, property, started) as unknown;
    },
  });
  return {
    stage,
    undisturbed: (withinMs) => {
      if (check === undefined) throw new Error('no bystander task on this stage');
      return check(withinMs);
    },
  };
}
