// Attack: fire the operator's alerts by writing status. A tenant may write its AITasks' status,
// so a Stalled=True condition there says nothing of what the operator decided: mallory writes
// one into the status of tasks the operator judged healthy, and aiops_tasks_stalled (the input
// of the AIOpsTasksStalled alert) stays 0 while her forged status is what the apiserver and the
// operator's cache hold. A task the operator itself stalls (its one allowed attempt spent,
// still breaching) is counted: the gauge reads the operator's own verdicts only.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { deployment } from '../support/workloads.ts';
import { eventually } from '../support/operator.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

const FORGED = 4;

/** `status` with a Stalled=True condition in place of any other Stalled condition. */
function forgedStalled(status: v2.Status | undefined): v2.Status {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    ...status,
    conditions: [
      ...(status?.conditions ?? []).filter((c) => c.type !== 'Stalled'),
      {
        type: 'Stalled',
        status: 'True',
        reason: 'MaxAttemptsReached',
        message: 'forged by the tenant',
        lastTransitionTime: now,
      },
    ],
  };
}

test('a Stalled condition a tenant writes moves no alert input; a stall the operator decides does', async () => {
  const s = stage;
  const { mallory } = s;
  for (let i = 0; i < FORGED; i++) {
    await mallory.deployments.create(mallory.namespace, deployment(`calm-${i}`, 1));
    s.exporter.set(LOAD, { namespace: mallory.namespace, deployment: `calm-${i}` }, 0);
    await mallory.tasks.create(
      mallory.namespace,
      loadTask(`calm-${i}`, { action: 'Noop' }, { intervalSeconds: 3600 }),
    );
  }
  const judged = await Promise.all(
    Array.from({ length: FORGED }, (_, i) =>
      eventually(`calm-${i} evaluated, not breaching`, async () => {
        const t = await mallory.tasks.get(mallory.namespace, `calm-${i}`);
        return t.status?.observedGeneration === t.metadata.generation && t.status?.phase === 'Monitoring'
          ? t
          : undefined;
      }),
    ),
  );
  for (const t of judged) await mallory.tasks.replaceStatus({ ...t, status: forgedStalled(t.status) });

  // The forged status stays (nothing in it makes the operator evaluate before the next hour);
  // the gauge is read between two reads that show it in place.
  const forgedNow = async (): Promise<number> => {
    let n = 0;
    for (let i = 0; i < FORGED; i++) {
      const t = await mallory.tasks.get(mallory.namespace, `calm-${i}`);
      if (t.status?.conditions?.some((c) => c.type === 'Stalled' && c.status === 'True')) n++;
    }
    return n;
  };
  assert.equal(await forgedNow(), FORGED, 'the forged conditions are stored');
  assert.equal(await s.operator.metric('aiops_tasks_stalled'), 0, 'no forged condition is counted');
  assert.equal(await forgedNow(), FORGED, 'the forged conditions were in place while the gauge was read');

  // A real stall: one attempt allowed, spent on a scale-up, and the load still over the threshold.
  await mallory.deployments.create(mallory.namespace, deployment('hot', 1));
  s.exporter.set(LOAD, { namespace: mallory.namespace, deployment: 'hot' }, 5);
  await mallory.tasks.create(
    mallory.namespace,
    loadTask('hot', { action: 'ScaleUp', scale: { maxReplicas: 5 }, cooldownSeconds: 0, maxAttempts: 1 }),
  );
  await eventually(
    'the operator stalls hot after its one attempt',
    async () => {
      const t = await mallory.tasks.get(mallory.namespace, 'hot');
      return t.status?.conditions?.some((c) => c.type === 'Stalled' && c.status === 'True')
        ? true
        : undefined;
    },
    120_000,
  );
  await eventually('aiops_tasks_stalled counts the operator’s own stall only', async () =>
    (await s.operator.metric('aiops_tasks_stalled')) === 1 ? true : undefined,
  );
  await undisturbed();
});
