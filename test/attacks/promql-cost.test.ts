// Heavy PromQL on the shared Prometheus. Confinement keeps mallory's query in
// her namespace, but `max(max_over_time(x{deployment="m"}[1d:1ms]))` confined is still 86
// million evaluations: four at a time take a real Prometheus to gigabytes, and the query
// runs on after the operator gives up. Here mallory writes that query and other shapes
// over the bounds (a wide range, a tiny step, an omitted step, nested subqueries whose windows
// add up): each is refused on her task (MetricsAvailable=False, QueryTooExpensive, naming the
// flag) and never reaches Prometheus — Prometheus' own count of /api/v1/query requests does
// not move while they are evaluated, then moves for alice's ordinary query. And a query the
// operator sends carries Prometheus' own timeout: with a query that runs far past its timeout,
// Prometheus itself answers that it stopped the query (its count of failed queries moves).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import { PrometheusClient } from '../../operator/edges/prometheus.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { bystander, LOAD, loadTask } from './stage.ts';
import { useStage } from './use-stage.ts';

const { stage } = useStage({ bystander: false });

/** Prometheus' own count of /api/v1/query requests it answered, by HTTP code, from its /metrics. */
async function queriesAnswered(): Promise<Map<string, number>> {
  const text = await (await fetch(`${stage.prometheus.url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(
    /^prometheus_http_requests_total\{code="(\d+)",handler="\/api\/v1\/query"\} (\S+)$/gm,
  ))
    counts.set(m[1] ?? '', Number(m[2]));
  return counts;
}

const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);

/** Mallory's queries over the default bounds (1h window, 10s step), with the flag each refusal must name. */
const HEAVY: readonly (readonly [string, string, RegExp])[] = [
  ['repro', `max(max_over_time(${LOAD}{deployment="repro"}[1d:1ms]))`, /--max-query-range 1h0m0s/],
  ['wide', `max(rate(${LOAD}{deployment="wide"}[30d]))`, /--max-query-range 1h0m0s/],
  ['tiny-step', `max(max_over_time(${LOAD}{deployment="tiny-step"}[5m:1ms]))`, /--min-query-resolution 10s/],
  ['no-step', `max(max_over_time(${LOAD}{deployment="no-step"}[30m:]))`, /--min-query-resolution 10s/],
  [
    'nested',
    `max(max_over_time(max_over_time(max_over_time(${LOAD}{deployment="nested"}[30m:10s])[20m:10s])[20m:10s]))`,
    /reads a 1h10m0s window with the subqueries around it, wider than --max-query-range 1h0m0s/,
  ],
  ['seconds', `max(max_over_time(${LOAD}{deployment="seconds"}[86400:10]))`, /--max-query-range 1h0m0s/],
];

/** The MetricsAvailable condition of mallory's task `name` once it is evaluated at its current generation. */
async function metricsCondition(name: string): Promise<{ reason: string; message: string; status: string }> {
  return eventually(`mallory's ${name} evaluated`, async () => {
    const t = await stage.mallory.tasks.get(stage.mallory.namespace, name);
    const cond = findCondition(t.status?.conditions, 'MetricsAvailable');
    return t.status?.observedGeneration === t.metadata.generation && cond !== undefined ? cond : undefined;
  });
}

test("mallory's heavy queries are refused on her tasks and never reach Prometheus; her ordinary one and alice's go on", async () => {
  const ns = stage.mallory.namespace;
  for (const [name] of HEAVY) {
    await stage.mallory.deployments.create(ns, deployment(name, 1));
    stage.exporter.set(LOAD, { namespace: ns, deployment: name }, 5);
  }
  // Nothing queries Prometheus yet: no task exists (alice's comes after this part).
  const before = total(await queriesAnswered());
  for (const [name, query] of HEAVY)
    await stage.mallory.tasks.create(
      ns,
      loadTask(name, { action: 'Noop' }, { trigger: { query, threshold: 1 } }),
    );
  for (const round of [1, 2]) {
    for (const [name, query, flag] of HEAVY) {
      const cond = await metricsCondition(name);
      assert.equal(cond.status, 'False', `${name}: ${JSON.stringify(cond)}`);
      assert.equal(cond.reason, 'QueryTooExpensive', `${query}: ${cond.message}`);
      assert.match(cond.message, /^trigger\.query costs too much: /, query);
      assert.match(cond.message, flag, query);
    }
    assert.equal(
      total(await queriesAnswered()),
      before,
      `round ${round}: Prometheus received none of mallory's refused queries`,
    );
    // Each task evaluated again at a new generation: still nothing sent.
    if (round === 1)
      for (const [name] of HEAVY)
        await stage.mallory.tasks.patch(ns, name, { spec: { trigger: { threshold: 2 } } });
  }
  const heavy = await stage.mallory.tasks.get(ns, 'repro');
  assert.equal(heavy.status?.lastDecision, undefined, 'no decision, no action on a refused query');

  // Alice's ordinary task goes on, and Prometheus' count moves for it (it does count the operator's queries).
  const undisturbed = await bystander(stage);
  await eventually("alice's query reached Prometheus", async () =>
    total(await queriesAnswered()) > before ? true : undefined,
  );
  await undisturbed();

  // Mallory's own query within the bounds is read (a window of 30m at a 10s step).
  await stage.mallory.deployments.create(ns, deployment('fine', 1));
  stage.exporter.set(LOAD, { namespace: ns, deployment: 'fine' }, 5);
  await stage.mallory.tasks.create(
    ns,
    loadTask(
      'fine',
      { action: 'Noop' },
      { trigger: { query: `max(max_over_time(${LOAD}{deployment="fine"}[30m:10s]))`, threshold: 1 } },
    ),
  );
  const fine = await eventually("mallory's ordinary query read and decided on", async () => {
    const t = await stage.mallory.tasks.get(ns, 'fine');
    return t.status?.lastDecision !== undefined ? t : undefined;
  });
  assert.equal(findCondition(fine.status?.conditions, 'MetricsAvailable')?.reason, 'MetricsRead');
  assert.equal(fine.status?.lastDecision?.metricValue, 5);
  await undisturbed();
});

test("every query carries Prometheus' own timeout: Prometheus itself stops one whose timeout has passed", async () => {
  // The operator's own client, with a 50 ms timeout, sends a query that runs for seconds (3.6
  // million subquery steps, each checking the deadline; 1.4 s without a timeout beside a busy
  // CI run): the answer comes from Prometheus, which stopped the query, not from the client
  // giving up. A query that could end within its timeout proves nothing: on a loaded machine
  // Prometheus' deadline timer can fire after a tiny query has already answered.
  const client = new PrometheusClient({ url: stage.prometheus.url, timeoutMs: 50 });
  const before = await queriesAnswered();
  const got = await client.query('count_over_time(vector(time())[1h:1ms])');
  assert.equal(got.ok, false);
  assert.ok(!got.ok);
  assert.match(got.message, /deadline exceeded|timed out/, 'the error is Prometheus’ own');
  assert.match(got.message, /Prometheus stopped it at the operator's 0\.05s query timeout/);
  const failedBefore = total(before) - (before.get('200') ?? 0);
  await eventually('Prometheus counted the query it stopped', async () => {
    const now = await queriesAnswered();
    return total(now) - (now.get('200') ?? 0) > failedBefore ? true : undefined;
  });
});
