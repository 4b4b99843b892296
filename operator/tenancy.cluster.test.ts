// Integration: the tenant boundary on the harness and a real Prometheus, with query
// confinement on (the default) and series that carry their namespace, as real ones do.
// An AITask refused for a cross-namespace target never squats it; a tenant's query cannot
// read another namespace's series into status or Events; one namespace's breaching tasks
// cannot hold more than its share of the remediation slots at once. The operators that see two namespaces watch all of
// them but only the AITasks labelled for this run (--watch-label-selector), so the other
// test files' AITasks are left alone.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type * as v2 from '../api/schema/v2.ts';
import { findCondition } from '../api/status/conditions.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../test/support/operator.ts';
import {
  aitask,
  clients,
  GAUGE,
  maxOverlap,
  metricsForFile,
  slotIntervals,
  taskEvents,
} from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';

const metrics = metricsForFile();
const CONFINED = { AIOPS_CONFINE_QUERIES: 'true' };
const scaleUp = { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 3600 } as const;

type After = { after: (fn: () => Promise<void>) => void };

/** Sets the gauge of `series` in `namespace` and waits until Prometheus answers with it. */
async function series(namespace: string, name: string, value: number): Promise<void> {
  metrics.exporter.set(GAUGE, { namespace, series: name }, value);
  await eventually(`Prometheus to see ${namespace}/${name}=${value}`, async () =>
    (await metrics.prometheus.query(`${GAUGE}{namespace="${namespace}",series="${name}"}`)) === value
      ? true
      : undefined,
  );
}

/** An operator on every namespace that reconciles only the AITasks labelled `selector`, confinement on. */
async function labelledOperator(
  selector: string,
  t: After,
  args: readonly string[] = [],
): Promise<OperatorProcess> {
  const op = await startOperatorProcess(
    [`--prometheus-url=${metrics.prometheus.url}`, `--watch-label-selector=${selector}`, ...args],
    CONFINED,
  );
  t.after(async () => {
    await op.stop();
  });
  return op;
}

/** `task` with the label this run's operator selects. */
function labelled(task: v2.AITask, run: string): v2.AITask {
  return { ...task, metadata: { ...task.metadata, labels: { 'aiops-tenancy': run } } };
}

/**
 * `waiting`, or its error with what the namespace's AITasks and their Events say and the
 * operator's warnings and errors, so a timeout on a loaded run shows where the storm stood.
 */
async function explained<T>(waiting: Promise<T>, ns: string, op: OperatorProcess): Promise<T> {
  try {
    return await waiting;
  } catch (err) {
    const c = await clients();
    const tasks = (await c.tasks.list(ns)).items.map((o) => ({
      name: o.metadata.name,
      phase: o.status?.phase,
      lastDecision: o.status?.lastDecision,
      conditions: o.status?.conditions?.map((x) => `${x.type}=${x.status} ${x.reason}: ${x.message}`),
    }));
    const events = (await taskEvents(ns)).map(
      (e) => `${e.eventTime} ${e.regarding.name} ${e.reason}: ${e.note}`,
    );
    const logs = op.logs.filter((l) => l['level'] === 'warn' || l['level'] === 'error').slice(-20);
    throw new Error(
      `${(err as Error).message}\ntasks: ${JSON.stringify(tasks, null, 1)}\nevents:\n${events.join('\n')}\noperator warnings and errors: ${JSON.stringify(logs)}`,
      { cause: err },
    );
  }
}

describe('tenant boundary on the harness', { concurrency: true }, () => {
  test("a task refused for a cross-namespace target never owns it: the target namespace's own task acts", async (t) => {
    const run = randomBytes(4).toString('hex');
    const a = await freshNamespace('tenant-owner', (fn) => t.after(fn));
    const b = await freshNamespace('tenant-squat', (fn) => t.after(fn));
    const c = await clients();
    await c.deployments.create(a, deployment('web', 2));
    await series(a, 'web', 5);
    const squat = aitask('squat', 'web', 'web', scaleUp);
    await c.tasks.create(
      b,
      labelled(
        { ...squat, spec: { ...squat.spec, target: { kind: 'Deployment', name: 'web', namespace: a } } },
        run,
      ),
    );
    await new Promise((r) => setTimeout(r, 1100));
    await c.tasks.create(a, labelled(aitask('own', 'web', 'web', scaleUp), run));
    await labelledOperator(`aiops-tenancy=${run}`, t);

    const own = await eventually('the owner task to act', async () => {
      const o = await c.tasks.get(a, 'own');
      return o.status?.lastDecision?.executed === true ? o : undefined;
    });
    assert.notEqual(findCondition(own.status?.conditions, 'Stalled')?.reason, 'DuplicateTarget');
    assert.equal((await c.deployments.get(a, 'web')).spec?.replicas, 3);
    // Not just any status: on first sight a task is shown Pending before it is evaluated.
    const squatter = await eventually('the squatter to be refused', async () => {
      const o = await c.tasks.get(b, 'squat');
      return findCondition(o.status?.conditions, 'Stalled')?.status === 'True' ? o : undefined;
    });
    assert.equal(findCondition(squatter.status?.conditions, 'Stalled')?.reason, 'CrossNamespaceRefused');
    assert.equal(squatter.status?.lastDecision?.executed, undefined, 'the squatter never acts');
  });

  test("a query for another namespace's series never brings its value into status or Events", async (t) => {
    const a = await freshNamespace('tenant-reader', (fn) => t.after(fn));
    const b = await freshNamespace('tenant-victim', (fn) => t.after(fn));
    const c = await clients();
    const SECRET = 4242.5;
    await series(a, 'own', 0.25);
    await series(b, 'secret', SECRET);
    const noop = { action: 'Noop' } as const;
    const query = (name: string, q: string) => {
      const task = aitask(name, name, name, noop);
      return { ...task, spec: { ...task.spec, trigger: { query: q, threshold: 0.1 } } };
    };
    const tasks = [
      query('own', `${GAUGE}{series="own"}`),
      query('peek', `${GAUGE}{series="secret"}`),
      query('aggregate', `sum(${GAUGE})`),
      query('named', `${GAUGE}{namespace="${b}",series="secret"}`),
      query('regex', `max(${GAUGE}{namespace=~".+"})`),
    ];
    for (const task of tasks) {
      await c.deployments.create(a, deployment(task.metadata.name ?? '', 1));
      await c.tasks.create(a, task);
    }
    const op = await startOperatorProcess(
      [`--namespace=${a}`, `--prometheus-url=${metrics.prometheus.url}`],
      CONFINED,
    );
    t.after(async () => {
      await op.stop();
    });
    const settled = async (name: string) =>
      eventually(`${name} to be evaluated`, async () => {
        const o = await c.tasks.get(a, name);
        return findCondition(o.status?.conditions, 'MetricsAvailable') !== undefined ? o : undefined;
      });

    const decided = async (name: string) =>
      eventually(`${name} to decide`, async () => {
        const o = await c.tasks.get(a, name);
        return o.status?.lastDecision !== undefined ? o : undefined;
      });
    const own = await decided('own');
    assert.equal(own.status?.lastDecision?.metricValue, 0.25, 'its own series is read');
    const aggregate = await decided('aggregate');
    assert.equal(aggregate.status?.lastDecision?.metricValue, 0.25, 'sum() over its namespace only');
    const peek = await settled('peek');
    assert.equal(findCondition(peek.status?.conditions, 'MetricsAvailable')?.reason, 'NoData');
    for (const name of ['named', 'regex']) {
      const refused = await settled(name);
      const cond = findCondition(refused.status?.conditions, 'MetricsAvailable');
      assert.ok(cond);
      assert.equal(cond.status, 'False');
      assert.equal(cond.reason, 'QueryRefused', name);
      assert.match(cond.message, new RegExp(`cannot be confined to namespace ${a}: .*namespace`));
      assert.equal(refused.status?.lastDecision, undefined, `${name}: no decision, no action`);
    }
    await eventually('the Events of the evaluations', async () =>
      (await taskEvents(a)).length > 0 ? true : undefined,
    );
    const everything = JSON.stringify({
      tasks: (await c.tasks.list(a)).items.map((o) => o.status),
      events: (await taskEvents(a)).map((e) => e.note),
    });
    assert.ok(!everything.includes(String(SECRET)), `the other namespace's value leaked: ${everything}`);
  });

  test('storm in one namespace: it holds at most its share of the pool at once, the other namespace still acts', async (t) => {
    const run = randomBytes(4).toString('hex');
    const noisy = await freshNamespace('tenant-noisy', (fn) => t.after(fn));
    const quiet = await freshNamespace('tenant-quiet', (fn) => t.after(fn));
    const c = await clients();
    const plan = [
      ...[0, 1, 2, 3, 4].map((i) => [noisy, `n${i}`] as const),
      ...[0, 1].map((i) => [quiet, `q${i}`] as const),
    ];
    for (const [ns, name] of plan) {
      await c.deployments.create(ns, deployment(name, 1));
      await series(ns, name, 5);
    }
    for (const [ns, name] of plan.filter(([ns]) => ns === noisy))
      await c.tasks.create(ns, labelled(aitask(name, name, name, scaleUp), run));
    const op = await labelledOperator(`aiops-tenancy=${run}`, t, [
      '--max-concurrent-remediations=4',
      '--max-concurrent-remediations-per-namespace=2',
      '--max-concurrent-reconciles=2',
    ]);
    const acted = async (ns: string) =>
      (await c.tasks.list(ns)).items.filter((o) => o.status?.lastDecision?.executed === true).length;
    await explained(
      eventually('the noisy namespace to fill its share and be refused the rest', async () =>
        (await taskEvents(noisy)).filter((e) => e.reason === 'ConcurrencyCapReached').length >= 3
          ? true
          : undefined,
      ),
      noisy,
      op,
    );
    for (const [ns, name] of plan.filter(([ns]) => ns === quiet))
      await c.tasks.create(ns, labelled(aitask(name, name, name, scaleUp), run));
    await eventually('the quiet namespace to act while the noisy one still breaches', async () =>
      (await acted(quiet)) === 2 ? true : undefined,
    );
    await eventually('each noisy task to act once its neighbours wait out their cooldown', async () =>
      (await acted(noisy)) === 5 ? true : undefined,
    );
    assert.ok((await op.metric('aiops_remediations_in_flight')) <= 4);
    const noisyEvents = await taskEvents(noisy);
    const held = plan
      .filter(([ns]) => ns === noisy)
      .flatMap(([, name]) => slotIntervals(noisyEvents.filter((e) => e.regarding.name === name)));
    assert.equal(held.length, 5);
    assert.ok(
      maxOverlap(held) <= 2,
      `the noisy namespace held ${maxOverlap(held)} slots at once, over its share`,
    );
    const refusals = noisyEvents.filter((e) => e.reason === 'ConcurrencyCapReached');
    assert.ok(refusals.length >= 3);
    for (const e of refusals)
      assert.match(
        e.note,
        new RegExp(
          `2 remediations in flight in namespace ${noisy} \\(--max-concurrent-remediations-per-namespace=2\\)`,
        ),
      );
    for (const [ns, name] of plan) {
      const scaled = (await taskEvents(ns, name)).filter((e) => e.reason === 'ScaleUp').length;
      assert.equal((await c.deployments.get(ns, name)).spec?.replicas, 1 + scaled);
    }
  });
});
