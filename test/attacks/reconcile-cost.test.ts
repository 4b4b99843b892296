// Attacks on what a tenant's writes make the operator spend beyond its tasks' intervals:
// mallory writes a bogus approval annotation in a loop for 60 s, first on one task with a
// one-hour interval, then on six RestartPod tasks waiting for approval. Every reconcile this
// triggers is off its task's interval, so it pays each outbound call from her namespace's
// budget (operator/reconcile-budget.ts: 60 a minute, 20 at once) and reuses the task's last
// metric answer and the pod its waiting decision chose. Prometheus' own count of queries, the
// Events in her namespace and the apiserver's count of the operator's AITask patches, status
// writes and pod lists stay within that budget, and alice's change is followed within the
// documented 15 s while the loop runs. Played against the operator under the CSV's RBAC in a
// memory cgroup of the shipped limit (useStage).

import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { APPROVE_ANNOTATION } from '../../api/install.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { ConflictError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { REPORTING_CONTROLLER } from '../../operator/edges/events.ts';
import { NAMESPACE_CALLS_BURST, NAMESPACE_CALLS_PER_MINUTE } from '../../operator/reconcile-budget.ts';
import { Resources, type KubeEvent } from '../../operator/runtime/kinds.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

/** How long mallory writes, in ms: the minute the budget is stated per. */
const FLOOD_MS = 60_000;

/** Alice's bystander task is evaluated every 10 s: the queries it makes in `seconds` (and one for her change). */
const aliceQueries = (seconds: number): number => Math.ceil(seconds / 10) + 2;

/** Prometheus' own count of the instant queries it answered, from its /metrics. */
async function queries(): Promise<number> {
  const text = await (await fetch(`${stage.prometheus.url}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(
    /^prometheus_http_requests_total\{code="\d+",handler="\/api\/v1\/query"\} (\S+)$/gm,
  ))
    sum += Number(m[1]);
  return sum;
}

/**
 * Sets LOAD of mallory's Deployment `name` to 5 and waits until Prometheus answers it: a task
 * with a one-hour interval evaluated before the first scrape would see no data for an hour.
 */
async function breaching(name: string): Promise<void> {
  stage.exporter.set(LOAD, { namespace: stage.mallory.namespace, deployment: name }, 5);
  const query = encodeURIComponent(
    `max(${LOAD}{namespace="${stage.mallory.namespace}",deployment="${name}"})`,
  );
  await eventually(`LOAD of ${name} scraped`, async () => {
    const body = (await (await fetch(`${stage.prometheus.url}/api/v1/query?query=${query}`)).json()) as {
      data?: { result?: { value?: [number, string] }[] };
    };
    return body.data?.result?.[0]?.value?.[1] === '5' ? true : undefined;
  });
}

/** The operator's Events in mallory's namespace. */
async function events(): Promise<KubeEvent[]> {
  const client = new ResourceClient<KubeEvent>(stage.admin, Resources.events);
  return (await client.listAll(stage.mallory.namespace)).items.filter(
    (e) => e.reportingController === REPORTING_CONTROLLER,
  );
}

/** What the counts are at one moment. */
interface Counts {
  readonly at: number;
  readonly queries: number;
  readonly events: number;
  /** AITask PATCHes: the operator's own (mallory writes with PUT), and alice's one change. */
  readonly patches: number;
  readonly statusWrites: number;
  readonly podLists: number;
}

async function counts(): Promise<Counts> {
  const request = (resource: string, verb: string, subresource?: string): Promise<number> =>
    apiserverRequests(stage.admin, { resource, verb, ...(subresource !== undefined ? { subresource } : {}) });
  const [q, e, patches, statusWrites, pods, replicaSets] = await Promise.all([
    queries(),
    events().then((all) => all.length),
    request('aitasks', 'PATCH'),
    request('aitasks', 'PUT', 'status'),
    request('pods', 'LIST'),
    request('replicasets', 'LIST'),
  ]);
  return { at: Date.now(), queries: q, events: e, patches, statusWrites, podLists: pods + replicaSets };
}

/**
 * Mallory PUTs `aiops.example.com/approve: bogus-<n>` on `names` in turn, with her own token,
 * for FLOOD_MS; alice's change is checked once the loop runs. Returns how many writes landed.
 */
async function flood(names: readonly string[]): Promise<number> {
  const { tasks, namespace } = stage.mallory;
  const last = new Map<string, v2.AITask>();
  const end = Date.now() + FLOOD_MS;
  let written = 0;
  let checked: Promise<void> | undefined;
  while (Date.now() < end) {
    const name = names[written % names.length] ?? '';
    const seen = last.get(name) ?? (await tasks.get(namespace, name));
    const next = {
      ...seen,
      metadata: {
        ...seen.metadata,
        annotations: { ...seen.metadata.annotations, [APPROVE_ANNOTATION]: `bogus-${written}` },
      },
    };
    try {
      last.set(name, await tasks.replace(namespace, name, next));
      written++;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      last.delete(name);
    }
    if (written === 50) checked = undisturbed();
  }
  await checked;
  return written;
}

/** Waits for mallory's task `name` to wait for approval with its decision, and returns it. */
const awaiting = (name: string): Promise<v2.DecisionRecord> =>
  eventually(
    `${name} waiting for approval`,
    async () => {
      const t = await stage.mallory.tasks.get(stage.mallory.namespace, name);
      const pending = t.status?.pendingDecision;
      if (
        pending?.blockedBy === 'AwaitingApproval' &&
        (pending.action !== 'RestartPod' || pending.effect?.pod)
      )
        return pending;
      throw new Error(`${name} is ${t.status?.phase}: ${t.status?.message}`);
    },
    120_000,
  );

/** The calls mallory's namespace may buy in `seconds` off its tasks' intervals. */
const budget = (seconds: number): number =>
  NAMESPACE_CALLS_BURST + Math.ceil((NAMESPACE_CALLS_PER_MINUTE * seconds) / 60);

/**
 * Asserts what the operator did between `before` and `after` for mallory's `writes` stays
 * within her namespace's budget, and says the figures.
 */
function withinBudget(t: TestContext, before: Counts, after: Counts, writes: number): void {
  const seconds = (after.at - before.at) / 1000;
  const allowed = budget(seconds);
  const queried = Math.max(0, after.queries - before.queries - aliceQueries(seconds));
  const evented = after.events - before.events;
  // Alice's one change is a PATCH and a status write of hers.
  const patched = after.patches - before.patches - 1;
  const statusWritten = Math.max(0, after.statusWrites - before.statusWrites - 1);
  const figures = `${writes} writes in ${seconds.toFixed(0)} s: ${queried} queries past alice's, ${evented} Events, ${patched} patches, ${statusWritten} status writes (budget ${allowed})`;
  t.diagnostic(figures);
  assert.ok(writes > 200, `mallory wrote in a loop: ${figures}`);
  assert.ok(queried + evented + patched + statusWritten <= allowed, figures);
}

test('a bogus approval written in a loop on a task with a one-hour interval buys no more than the namespace budget', async (t) => {
  const { namespace, deployments, tasks } = stage.mallory;
  await deployments.create(namespace, deployment('web', 1));
  await breaching('web');
  await tasks.create(
    namespace,
    loadTask(
      'web',
      { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 3600 },
      { approval: 'Manual', intervalSeconds: 3600 },
    ),
  );
  await awaiting('web');
  const before = await counts();
  const writes = await flood(['web']);
  const after = await counts();
  withinBudget(t, before, after, writes);
  await eventually('the last bogus approval removed and its ApprovalIgnored Event recorded', async () => {
    const t = await tasks.get(namespace, 'web');
    if (t.metadata.annotations?.[APPROVE_ANNOTATION] !== undefined) return undefined;
    return (await events()).some(
      (e) => e.reason === 'ApprovalIgnored' && e.note.includes(`"bogus-${writes - 1}"`),
    )
      ? true
      : undefined;
  });
  assert.equal((await deployments.get(namespace, 'web')).spec?.replicas, 1, 'nothing was approved');
});

test('six RestartPod tasks waiting for approval do not read their pods again on every write', async (t) => {
  const { namespace, deployments, pods, tasks } = stage.mallory;
  const names = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];
  for (const name of names) await deployments.create(namespace, deployment(name, 2));
  await eventually('two pods of each Deployment', async () => {
    const all = (await pods.list(namespace)).items;
    return names.every((n) => all.filter((p) => p.metadata.labels?.['app'] === n).length >= 2)
      ? true
      : undefined;
  });
  for (const name of names) {
    await breaching(name);
    await tasks.create(
      namespace,
      loadTask(
        name,
        { action: 'RestartPod', cooldownSeconds: 3600 },
        { approval: 'Manual', intervalSeconds: 3600 },
      ),
    );
  }
  for (const name of names) await awaiting(name);
  const before = await counts();
  const writes = await flood(names);
  const after = await counts();
  withinBudget(t, before, after, writes);
  const lists = after.podLists - before.podLists;
  t.diagnostic(`${lists} pod and ReplicaSet lists`);
  assert.ok(lists <= 2, `the waiting tasks' pods were listed ${lists} times for ${writes} writes`);
});
