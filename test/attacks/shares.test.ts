// Attacks on what tenants share: the LLM and the operator's workers. Mallory asks the shared
// endpoint for a model it does not serve, which opens the circuit breaker of that endpoint
// and model only — alice's advice from the same endpoint still arrives; and mallory points
// her tasks at an allow-listed endpoint that never answers, with the schema's longest timeout
// (120 s): each call is abandoned at --llm-max-timeout (10 s, plus 1 s), and alice's changes
// are still reconciled within 15 s while mallory's calls hang. Played against the operator
// under the CSV's RBAC, with its default workers, on a stage of the suite's own. Every wait
// ends on what it asserts (a status, the operator's Events, the endpoint's own record of each
// call), with deadlines a loaded machine meets: the suite also runs beside a CPU hog (`npm
// test -- --busy`).

import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { Resources, type KubeEvent } from '../../operator/runtime/kinds.ts';
import { modelServer } from '../support/llm-model-server.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { askingLLM, bystander, LOAD, loadTask, startStage, type Stage, type Tenant } from './stage.ts';

/** An allow-listed endpoint that accepts each call and never answers; when each call opened and closed (ms). */
interface HangingEndpoint {
  readonly endpoint: string;
  readonly calls: { opened: number; closed?: number }[];
  close(): Promise<void>;
}

async function hangingEndpoint(): Promise<HangingEndpoint> {
  const calls: { opened: number; closed?: number }[] = [];
  const srv = http.createServer((req) => {
    const call: { opened: number; closed?: number } = { opened: Date.now() };
    calls.push(call);
    req.resume();
    req.socket.once('close', () => (call.closed = Date.now()));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/v1/chat/completions`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

let stage: Stage;
let models: Awaited<ReturnType<typeof modelServer>>;
let hanging: HangingEndpoint;
const stops: (() => Promise<void>)[] = [];
let bystanderCheck: Promise<(withinMs?: number) => Promise<void>> | undefined;
/**
 * Alice's bystander check (stage.ts), made once: after the first test, whose advised task
 * scales alice's own Deployment, is over.
 */
const aliceCheck = (): Promise<(withinMs?: number) => Promise<void>> => (bystanderCheck ??= bystander(stage));

before(async () => {
  models = await modelServer('test-model');
  stops.push(() => models.close());
  hanging = await hangingEndpoint();
  stops.push(() => hanging.close());
  const prefix = (endpoint: string): string => `${new URL(endpoint).origin}/v1/`;
  stage = await startStage(() => undefined, {
    args: [`--llm-endpoint-allowlist=${prefix(models.endpoint)},${prefix(hanging.endpoint)}`],
  });
  stops.push(() => stage.stop());
});
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

const llmReason = async (tenant: Tenant, name: string): Promise<string | undefined> =>
  findCondition((await tenant.tasks.get(tenant.namespace, name)).status?.conditions, 'LLMAvailable')?.reason;

test("a wrong model opens the breaker of that endpoint and model only: alice's advice from the same endpoint arrives", async () => {
  const { mallory, alice } = stage;
  await askingLLM(stage, mallory, 'wrongmodel', { endpoint: models.endpoint, model: 'bogus-model' });
  await eventually(
    "mallory's breaker open",
    async () => ((await llmReason(mallory, 'wrongmodel')) === 'LLMCircuitOpen' ? true : undefined),
    90_000,
  );
  assert.equal(
    models.requests.get('bogus-model'),
    3,
    'the default --llm-failure-threshold of calls went out',
  );

  await askingLLM(stage, alice, 'rightmodel', { endpoint: models.endpoint, model: 'test-model' });
  await eventually("alice's advice", async () =>
    (await llmReason(alice, 'rightmodel')) === 'LLMAdvice' ? true : undefined,
  );
  assert.equal(await llmReason(mallory, 'wrongmodel'), 'LLMCircuitOpen', "mallory's model stays suspended");
  assert.equal(models.requests.get('bogus-model'), 3, 'and is not called again');
  // Alice's advised task scales her Deployment at each evaluation; it ends here, so the next
  // test's bystander sees nothing of hers move but what mallory might cause.
  await alice.tasks.delete(alice.namespace, 'rightmodel');
  await eventually("alice's advised task gone", () =>
    alice.tasks.get(alice.namespace, 'rightmodel').then(
      () => undefined,
      () => true,
    ),
  );
});

test("calls to an endpoint that never answers hold a worker at most --llm-max-timeout; alice's changes go on meanwhile", async () => {
  const { mallory } = stage;
  const undisturbed = await aliceCheck();
  // One model per task: each has a breaker of its own, so the calls keep hanging.
  for (let i = 0; i < 6; i++)
    await askingLLM(stage, mallory, `hang${i}`, {
      endpoint: hanging.endpoint,
      model: `slow-${i}`,
      timeoutSeconds: 120,
    });
  await eventually('mallory holding workers with hanging calls', () =>
    Promise.resolve(hanging.calls.filter((c) => c.closed === undefined).length >= 3 ? true : undefined),
  );
  await undisturbed();
  await undisturbed();
  const opened = hanging.calls.length;
  await eventually(
    `the ${opened} calls seen so far abandoned`,
    () =>
      Promise.resolve(hanging.calls.slice(0, opened).every((c) => c.closed !== undefined) ? true : undefined),
    120_000,
  );
  // The operator abandons each call at 10 s (its 11 s deadline backs that up); the rest is room
  // for a loaded machine to deliver the close, still far below the task's own 120 s.
  for (const c of hanging.calls.slice(0, opened)) {
    const held = (c.closed ?? 0) - c.opened;
    assert.ok(held <= 20_000, `a call held its worker ${held} ms, not abandoned at --llm-max-timeout 10 s`);
  }
  // hang0's condition says LLMTimeout only until its third timeout opens its breaker
  // (LLMCircuitOpen): its Events keep every decision, so the wait cannot miss the window.
  const events = new ResourceClient<KubeEvent>(stage.admin, Resources.events);
  const timedOut = await eventually(
    'the rules to decide for hang0, saying why',
    async () =>
      (await events.list(mallory.namespace)).items.find(
        (e) => e.regarding.kind === 'AITask' && e.regarding.name === 'hang0' && e.reason === 'LLMTimeout',
      ),
    120_000,
  );
  assert.match(
    timedOut.note,
    /within 10s/,
    "the call was bounded by --llm-max-timeout, not the task's 120 s",
  );
});

test("a tenant's patch loop is paced to --namespace-reconcile-qps (5/s after a burst of 20); the other tenant's changes go on", async () => {
  const { mallory } = stage;
  const undisturbed = await aliceCheck();
  const names = Array.from({ length: 10 }, (_, i) => `loop${i}`);
  for (const name of names) {
    await mallory.deployments.create(mallory.namespace, deployment(name, 1));
    await mallory.tasks.create(
      mallory.namespace,
      loadTask(
        name,
        { action: 'Noop' },
        { trigger: { query: `max(${LOAD}{deployment="${name}"})`, threshold: 1000 }, intervalSeconds: 3600 },
      ),
    );
  }
  await eventually('the loop tasks observed', async () => {
    const items = (await mallory.tasks.list(mallory.namespace)).items.filter((t) =>
      names.includes(t.metadata.name ?? ''),
    );
    return items.length === names.length &&
      items.every((t) => t.status?.observedGeneration === t.metadata.generation)
      ? true
      : undefined;
  });
  const before = await stage.operator.metric('controller_runtime_reconcile_total');
  const started = Date.now();
  for (let i = 0; i < 300; i++)
    await mallory.tasks.patch(mallory.namespace, names[i % names.length] ?? '', {
      metadata: { annotations: { 'mallory.example.com/spin': String(i) } },
    });
  await undisturbed();
  const seconds = (Date.now() - started) / 1000;
  const reconciles = (await stage.operator.metric('controller_runtime_reconcile_total')) - before;
  // The burst, the pace over the window, and the bystander's and other tasks' own reconciles.
  const bound = 20 + 5 * seconds + 15;
  assert.ok(
    reconciles <= bound,
    `300 patches in ${seconds.toFixed(1)} s made ${reconciles} reconciles, over ${bound.toFixed(0)}`,
  );
});
