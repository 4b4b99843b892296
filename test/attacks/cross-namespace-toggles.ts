// The attack both cross-namespace fan-out files play: mallory's AITasks name alice's
// Deployment `app` (the one alice's bystander task watches), and mallory toggles each of them
// over and under the cache's 64 KiB object bound (MAX_OBJECT_CHARGE, in heap charge, where a
// Latin-1 string costs its length and 32) by writing and removing a 70 KiB approval
// annotation, the one annotation the cache keeps. Each time a task
// grows past the limit the cache drops it as deleted, as if it had been deleted. What it costs
// alice is counted by Prometheus itself: only alice's task queries it, since mallory's never
// read alice's Deployment's metric (refused, or not the target's owner).

import { APPROVE_ANNOTATION } from '../../api/install.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { MAX_OBJECT_CHARGE } from '../../operator/runtime/memory-ledger.ts';
import { eventually } from '../support/operator.ts';
import { LOAD, loadTask, type Stage } from './stage.ts';

/** Mallory's tasks on alice's Deployment, each toggled in a loop of its own. */
const TASKS = ['cross0', 'cross1', 'cross2', 'cross3'];
/** Times each task is grown past the limit and shrunk back. */
const TOGGLES = 40;
/** An approval annotation that alone takes the trimmed task past the cache's limit. */
const BLOB = 'x'.repeat(MAX_OBJECT_CHARGE + 6 * 1024);
/** The interval of alice's bystander task (stage.ts loadTask's default), in seconds. */
export const ALICE_INTERVAL_S = 10;

/** Prometheus' own count of /api/v1/query requests it answered, every code, from its /metrics. */
async function queriesAnswered(stage: Stage): Promise<number> {
  const text = await (await fetch(`${stage.prometheus.url}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(
    /^prometheus_http_requests_total\{code="\d+",handler="\/api\/v1\/query"\} (\S+)$/gm,
  ))
    total += Number(m[1]);
  return total;
}

/** What the attack made and cost. */
export interface Toggled {
  /** Versions of mallory's tasks the operator refused as too large (each dropped as deleted). */
  readonly toggles: number;
  /** From the first toggle to alice's change observed after the last. */
  readonly seconds: number;
  /** Prometheus queries over those seconds: alice's task's evaluations. */
  readonly queries: number;
}

/**
 * Creates mallory's tasks on alice's `app`, waits until each says `reason` (its Stalled
 * condition: CrossNamespaceRefused, or DuplicateTarget when alice's older task owns `app`),
 * toggles them all in parallel, waits until the operator refused every oversized version,
 * then runs `undisturbed` (alice's change, one evaluation of hers) and counts.
 */
export async function toggleOnAlicesTarget(
  stage: Stage,
  reason: string,
  undisturbed: () => Promise<void>,
): Promise<Toggled> {
  const m = stage.mallory;
  for (const name of TASKS)
    await m.tasks.create(
      m.namespace,
      loadTask(
        name,
        { action: 'Noop' },
        {
          target: { kind: 'Deployment', name: 'app', namespace: stage.alice.namespace },
          trigger: { query: `max(${LOAD}{deployment="app"})`, threshold: 1000 },
        },
      ),
    );
  for (const name of TASKS)
    await eventually(`${name} to be ${reason}`, async () => {
      const task = await m.tasks.get(m.namespace, name);
      return findCondition(task.status?.conditions, 'Stalled')?.reason === reason ? true : undefined;
    });
  const refused = (): Promise<number> =>
    stage.operator.metric('aiops_cache_objects_refused_total', { resource: 'aitasks' });
  const [queriesBefore, refusedBefore] = [await queriesAnswered(stage), await refused()];
  const started = Date.now();
  await Promise.all(
    TASKS.map(async (name) => {
      for (let i = 0; i < TOGGLES; i++) {
        await m.tasks.patch(m.namespace, name, { metadata: { annotations: { [APPROVE_ANNOTATION]: BLOB } } });
        await m.tasks.patch(m.namespace, name, { metadata: { annotations: { [APPROVE_ANNOTATION]: null } } });
      }
    }),
  );
  const toggles = TASKS.length * TOGGLES;
  await eventually(
    `the operator to refuse each of the ${toggles} oversized versions`,
    async () => ((await refused()) >= refusedBefore + toggles ? true : undefined),
    120_000,
  );
  await undisturbed();
  return {
    toggles,
    seconds: (Date.now() - started) / 1000,
    queries: (await queriesAnswered(stage)) - queriesBefore,
  };
}
