// Integration: a running operator (child process, shared cluster, leader election on) serves,
// after reconciling an AITask, every controller-runtime series with controller-runtime's labels
// (controller_runtime_*{controller="aitask"}, workqueue_*{name="aitask",controller="aitask"},
// rest_client_requests_total{code,method,host}, leader_election_master_status{name}), the
// process_* series unprefixed, and exactly the families README's Metrics table lists.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResourceClient } from '../lib/kube/resources.ts';
import { freshNamespace, testAITasks, testTransport } from '../test/support/cluster.ts';
import { eventually, startOperatorProcess } from '../test/support/operator.ts';
import { deployment } from '../test/support/workloads.ts';
import { operatorMetricDocs } from './metrics-doc.ts';
import { Resources, type Deployment } from './runtime/kinds.ts';
import { RECONCILE_TIME_BUCKETS } from './runtime/metrics.ts';

/** One sample line of the text format. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The families (`# TYPE` lines: name → type) and samples of a /metrics text. */
function parse(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] ?? '', type[2] ?? '');
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
    samples.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return { types, samples };
}

test('a running operator serves the controller-runtime series with their labels, and what README lists', async (t) => {
  const ns = await freshNamespace('op-stdmetrics', (fn) => t.after(fn));
  const transport = await testTransport();
  const tasks = await testAITasks('v2');
  await new ResourceClient<Deployment>(transport, Resources.deployments).create(ns, deployment('web', 1));
  await tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'watched' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'up', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 10,
    },
  });
  // No Prometheus is needed: a reconcile that cannot read the metric still ends (MetricsAvailable=False).
  const op = await startOperatorProcess([
    `--namespace=${ns}`,
    '--prometheus-url=http://127.0.0.1:1',
    '--leader-elect',
    `--leader-election-namespace=${ns}`,
    '--max-concurrent-reconciles=2',
  ]);
  t.after(async () => {
    await op.stop();
  });
  await eventually('the AITask reconciled', async () => {
    const o = await tasks.get(ns, 'watched');
    return o.status?.observedGeneration === o.metadata.generation ? true : undefined;
  });
  const read = async (): Promise<ReturnType<typeof parse>> =>
    parse(await (await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`)).text());
  // The reconcile's counters move when it returns, just after its status write.
  const { types, samples } = await eventually('a reconcile counted', async () => {
    const r = await read();
    const done = r.samples.some(
      (s) => s.name === 'controller_runtime_reconcile_time_seconds_count' && s.value >= 1,
    );
    return done ? r : undefined;
  });
  const one = (name: string, labels: Record<string, string>): number => {
    const found = samples.filter(
      (s) =>
        s.name === name &&
        Object.keys(s.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    assert.equal(found.length, 1, `${name}${JSON.stringify(labels)} is served once`);
    return found[0]?.value ?? NaN;
  };

  // Exactly the families README's table lists, with its types, and no label it does not name.
  const docs = operatorMetricDocs();
  assert.deepEqual(
    [...types.entries()].sort(),
    docs.map((d) => [d.name, d.type]).sort(),
    'the families served are those README lists',
  );
  for (const s of samples) {
    // Its own family, or the histogram or summary it is a series of (never a longer name's prefix).
    const family =
      docs.find((d) => s.name === d.name) ??
      docs.find((d) => ['_bucket', '_sum', '_count'].some((suffix) => s.name === `${d.name}${suffix}`));
    assert.ok(family, `${s.name} belongs to a listed family`);
    for (const label of Object.keys(s.labels))
      assert.ok(
        family.labels.includes(label) || label === 'le' || label === 'quantile',
        `${s.name} label ${label}`,
      );
  }

  const c = { controller: 'aitask' };
  for (const result of ['success', 'error', 'requeue', 'requeue_after'])
    assert.ok(one('controller_runtime_reconcile_total', { ...c, result }) >= 0);
  assert.ok(
    one('controller_runtime_reconcile_total', { ...c, result: 'requeue_after' }) >= 1,
    'a reconcile asking to come back after intervalSeconds is requeue_after',
  );
  for (const name of [
    'controller_runtime_reconcile_errors_total',
    'controller_runtime_terminal_reconcile_errors_total',
    'controller_runtime_reconcile_panics_total',
    'controller_runtime_active_workers',
  ])
    assert.ok(one(name, c) >= 0, name);
  assert.equal(one('controller_runtime_max_concurrent_reconciles', c), 2);
  assert.ok(one('controller_runtime_reconcile_time_seconds_count', c) >= 1);
  const le = samples
    .filter((s) => s.name === 'controller_runtime_reconcile_time_seconds_bucket')
    .map((s) => s.labels['le']);
  assert.deepEqual(le, [...RECONCILE_TIME_BUCKETS.map(String), '+Inf'], "controller-runtime's buckets");

  const q = { name: 'aitask', controller: 'aitask' };
  assert.ok(one('workqueue_adds_total', q) >= 1);
  assert.ok(one('workqueue_depth', q) >= 0);
  assert.ok(one('workqueue_queue_duration_seconds_count', q) >= 1);
  assert.ok(one('workqueue_work_duration_seconds_count', q) >= 1);
  assert.ok(one('workqueue_retries_total', q) >= 1, 'the requeue after intervalSeconds is a delayed add');
  assert.ok(one('workqueue_unfinished_work_seconds', q) >= 0);
  assert.ok(one('workqueue_longest_running_processor_seconds', q) >= 0);
  assert.equal(
    samples.filter((s) => s.name === 'workqueue_work_duration_seconds_bucket').length,
    13,
    'twelve exponential buckets and +Inf',
  );

  const host = new URL(transport.server).host;
  assert.ok(one('rest_client_requests_total', { code: '200', method: 'GET', host }) >= 1, 'lists and gets');
  assert.ok(
    samples.some(
      (s) =>
        s.name === 'rest_client_requests_total' && s.labels['method'] !== 'GET' && s.labels['host'] === host,
    ),
    'the status writes and Lease updates are counted too',
  );
  assert.equal(one('leader_election_master_status', { name: 'aiops-operator-leader' }), 1);

  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'process_start_time_seconds',
    'process_open_fds',
  ])
    assert.ok(one(name, {}) > 0, name);
  assert.ok(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes'));
  assert.deepEqual(
    samples
      .filter((s) => /^aiops_(process|nodejs|reconcile|workqueue|leader)/.test(s.name))
      .map((s) => s.name),
    [],
    'the replaced aiops_* series are gone',
  );
});
