// Attack on the LLM call budget: mallory runs three tasks in LLM mode that ask at every
// evaluation, on an operator whose per-namespace share is 2 calls an hour
// (--llm-namespace-calls-per-hour). After her share, her tasks fall back to the rules with
// LLMBudgetExhausted (per-namespace) and no further request of hers reaches the endpoint;
// alice's task, asking the same endpoint and model, still gets advice. Played against the
// operator under the CSV's RBAC on a stage of the suite's own. Calls are counted where they
// land (the model server), once each task has shown it asked after the share was spent: a
// call the operator reserved but a loaded machine has not delivered yet is waited for, never
// missed, and no deadline is one an idle machine alone meets.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { Resources, type KubeEvent } from '../../operator/runtime/kinds.ts';
import { modelServer } from '../support/llm-model-server.ts';
import { eventually } from '../support/operator.ts';
import { askingLLM, startStage, type Stage, type Tenant, stopStarted } from './stage.ts';

let stage: Stage;
let models: Awaited<ReturnType<typeof modelServer>>;

before(async () => {
  models = await modelServer('test-model');
  stage = await startStage(() => undefined, {
    args: [
      `--llm-endpoint-allowlist=${new URL(models.endpoint).origin}/v1/`,
      '--llm-namespace-calls-per-hour=2',
    ],
  });
});
after(async () => {
  await stopStarted(stage, models);
});

/** A breaching task of `tenant` asking the model server at every evaluation. */
const asking = (tenant: Tenant, name: string): Promise<void> =>
  askingLLM(stage, tenant, name, { endpoint: models.endpoint, model: 'test-model' });

const llm = async (tenant: Tenant, name: string) =>
  findCondition((await tenant.tasks.get(tenant.namespace, name)).status?.conditions, 'LLMAvailable');

/** Where `tenant`'s task `name` stands, for a wait that ends without what it waited for. */
async function standing(tenant: Tenant, name: string): Promise<string> {
  const status = (await tenant.tasks.get(tenant.namespace, name)).status;
  const conditions = (status?.conditions ?? []).map((c) => `${c.type}=${c.status}:${c.reason}`).join(' ');
  return `phase ${status?.phase ?? 'none'}; ${conditions}; last decision ${JSON.stringify(status?.lastDecision ?? null)}`;
}

/** The operator's log lines about `tenant`'s namespace, the last `n`. */
const logsOf = (tenant: Tenant, n = 20): string =>
  stage.operator.logs
    .map((l) => JSON.stringify(l))
    .filter((l) => l.includes(tenant.namespace))
    .slice(-n)
    .join('\n');

test("one namespace's spent share leaves the other namespace's calls untouched", async () => {
  const { mallory, alice } = stage;
  const tasks = ['a', 'b', 'c'];
  for (const name of tasks) await asking(mallory, name);
  // Each of mallory's tasks asks at every evaluation; once all three report the spent share,
  // each has asked after it was spent and been refused without a call.
  const refused = await eventually(
    "mallory's share spent, for each of her tasks",
    async () => {
      const conditions = await Promise.all(tasks.map((name) => llm(mallory, name)));
      if (conditions.every((c) => c?.reason === 'LLMBudgetExhausted')) return conditions;
      throw new Error((await Promise.all(tasks.map((name) => standing(mallory, name)))).join('\n'));
    },
    240_000,
  );
  for (const c of refused) assert.match(c?.message ?? '', /per-namespace/);
  // The budget is taken before a call goes out: the second call may still be on its way.
  const spent = await eventually(
    "mallory's two calls at the model server",
    () => {
      const n = models.requests.get('test-model') ?? 0;
      return Promise.resolve(n >= 2 ? n : undefined);
    },
    120_000,
  );
  assert.equal(spent, 2, "mallory's two calls, and no more");

  await asking(alice, 'fair');
  // Her task acts at every evaluation (no cooldown), so her LLMAdvice condition may last only
  // until her own share is spent: the decision's Event, which stays, proves the advice came.
  const events = new ResourceClient<KubeEvent>(stage.admin, Resources.events);
  await eventually(
    "alice's advice",
    async () => {
      const advised = (await events.list(alice.namespace)).items.some(
        (e) => e.regarding.kind === 'AITask' && e.regarding.name === 'fair' && e.note.includes('LLM advice'),
      );
      if (advised || (await llm(alice, 'fair'))?.reason === 'LLMAdvice') return true;
      throw new Error(await standing(alice, 'fair'));
    },
    180_000,
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\noperator log on ${alice.namespace}:\n${logsOf(alice)}`);
  });
  const calls = models.requests.get('test-model') ?? 0;
  assert.ok(calls >= 3 && calls <= 4, `${calls} calls: mallory's 2 and alice's own (her share is 2 as well)`);
});
