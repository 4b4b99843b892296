// Attacks on the remediation slots (--max-concurrent-remediations 4, a share of 2 per
// namespace): mallory forges `phase: Healing` into ten of her tasks' status with her own
// token, and two namespaces keep always-breaching tasks in day-long cooldowns or sitting at
// their maxReplicas. Neither may keep another namespace's remediation from running: only grants
// the operator made hold a slot, and a task that does not act (cooling down, at its replica
// bound) holds none. Played against the operator under
// the CSV's RBAC on a stage of the suite's own.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../../api/schema/v2.ts';
import { metaTime } from '../../api/status/conditions.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { Resources, type Deployment, type KubeEvent } from '../../operator/runtime/kinds.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage } = useStage({
  bystander: false,
  args: ['--max-concurrent-remediations=4', '--max-concurrent-remediations-per-namespace=2'],
});

const deployments = (): ResourceClient<Deployment> => new ResourceClient(stage.admin, Resources.deployments);

/**
 * Creates Deployment `name` in `ns` (1 replica) with its load at 5 and an AITask scaling it
 * up, to `maxReplicas` with `cooldownSeconds` between actions.
 */
async function breachingTask(
  ns: string,
  name: string,
  { cooldownSeconds = 86_400, maxReplicas = 5 }: { cooldownSeconds?: number; maxReplicas?: number } = {},
) {
  await deployments().create(ns, deployment(name, 1));
  stage.exporter.set(LOAD, { namespace: ns, deployment: name }, 5);
  await stage.adminTasks.v2.create(
    ns,
    loadTask(name, { action: 'ScaleUp', scale: { maxReplicas }, cooldownSeconds, maxAttempts: 5 }),
  );
}

const replicas = async (ns: string, name: string): Promise<number | undefined> =>
  (await deployments().get(ns, name)).spec?.replicas;

/**
 * True once the task `ns/name` (ScaleUp from 1) has acted; until then throws what its status
 * says (phase and conditions), which `eventually` reports if it times out.
 */
async function acted(ns: string, name: string): Promise<true> {
  if (((await replicas(ns, name)) ?? 0) >= 2) return true;
  const status = (await stage.adminTasks.v2.get(ns, name)).status;
  const conditions = (status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`);
  throw new Error(`${ns}/${name} has not acted: phase ${status?.phase}; ${conditions.join('; ')}`);
}

/** The operator's refusals for lack of a slot in `ns`. */
async function capRefusals(ns: string): Promise<KubeEvent[]> {
  const events = new ResourceClient<KubeEvent>(stage.admin, Resources.events);
  return (await events.list(ns)).items.filter((e) => e.reason === 'ConcurrencyCapReached');
}

function running(): void {
  const child = stage.operator.child;
  assert.ok(child.exitCode === null && child.signalCode === null, 'the operator process is still running');
}

test("ten forged 'phase: Healing' statuses hold no slot: another namespace's remediation runs", async () => {
  const { mallory, alice } = stage;
  const forged = Array.from({ length: 10 }, (_, i) => `forged${i}`);
  // Manual approval: the tasks breach but never act, so every slot they "hold" is forged.
  for (const name of forged) {
    await mallory.deployments.create(mallory.namespace, deployment(name, 1));
    stage.exporter.set(LOAD, { namespace: mallory.namespace, deployment: name }, 5);
    await mallory.tasks.create(
      mallory.namespace,
      loadTask(
        name,
        { action: 'ScaleUp', scale: { maxReplicas: 5 }, cooldownSeconds: 86_400 },
        { approval: 'Manual' },
      ),
    );
  }
  const forge = async (name: string): Promise<boolean> => {
    const live = await mallory.tasks.get(mallory.namespace, name);
    if (live.status?.observedGeneration !== live.metadata.generation) return false;
    const status: v2.Status = {
      phase: 'Healing',
      lastExecutionTime: metaTime(new Date()),
      attempts: 1,
      observedGeneration: live.metadata.generation ?? 1,
    };
    return mallory.tasks.replaceStatus({ ...live, status }).then(
      () => true,
      () => false,
    );
  };
  for (const name of forged)
    await eventually(`${name} forged`, async () => ((await forge(name)) ? true : undefined));
  await eventually('the operator to keep the forged tasks Healing, in their forged cooldown', async () => {
    const items = (await mallory.tasks.list(mallory.namespace)).items.filter((t) =>
      forged.includes(t.metadata.name ?? ''),
    );
    return items.every((t) => t.status?.phase === 'Healing' && t.status.conditions !== undefined)
      ? true
      : undefined;
  });

  await breachingTask(alice.namespace, 'victim', { cooldownSeconds: 0 });
  await eventually("alice's remediation to run despite the forged holders", () =>
    acted(alice.namespace, 'victim'),
  );
  assert.deepEqual(
    (await capRefusals(alice.namespace)).map((e) => e.note),
    [],
    'alice was never refused a slot',
  );
  for (const name of forged) assert.equal(await replicas(mallory.namespace, name), 1, `${name} never acted`);
  running();
});

/**
 * Mallory and alice each fill their share of 2 with always-breaching tasks made by
 * `hoarding` (each acts once, 1 → 2 replicas, and then does not act again); then a task in
 * the fresh namespace `third` must still get a slot and act.
 */
async function hoardThenThird(
  prefix: string,
  hoarding: { cooldownSeconds?: number; maxReplicas?: number },
  third: string,
): Promise<void> {
  const { mallory, alice } = stage;
  const hoarders = [mallory.namespace, mallory.namespace, alice.namespace, alice.namespace].map(
    (ns, i) => [ns, `${prefix}${i}`] as const,
  );
  for (const [ns, name] of hoarders) await breachingTask(ns, name, hoarding);
  await eventually('each hoarder to act once, filling the pool of 4', async () => {
    for (const [ns, name] of hoarders) if ((await replicas(ns, name)) !== 2) return undefined;
    return true;
  });
  await stage.admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: third } },
  });
  await breachingTask(third, 'victim', { cooldownSeconds: 0 });
  await eventually(`${third}'s remediation to run while the hoarders still breach`, () =>
    acted(third, 'victim'),
  );
  for (const [ns, name] of hoarders) assert.equal(await replicas(ns, name), 2, `${ns}/${name} acted once`);
  running();
}

test('two namespaces with always-breaching tasks in day-long cooldowns do not hold the pool', () =>
  hoardThenThird('hoard', {}, 'carol'));

test('two namespaces with always-breaching tasks sitting at their maxReplicas do not hold the pool', () =>
  hoardThenThird('atmax', { cooldownSeconds: 0, maxReplicas: 2 }, 'dave'));
