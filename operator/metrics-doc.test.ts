// The Metrics table of docs/operator.md is what operator/metrics-doc.ts renders from the operator's registry
// (`npm run generate` writes it), and lists controller-runtime's series under their names.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { asRead, metricsTable, operatorMetricDocs, README_MARKERS, readMetricsTable } from './metrics-doc.ts';

const README = readFileSync(new URL('../docs/operator.md', import.meta.url), 'utf8');

test("docs/operator.md's Metrics table lists every series family the operator serves, as the registry has it", () => {
  const docs = operatorMetricDocs();
  assert.deepEqual(
    readMetricsTable(README),
    asRead(docs),
    'docs/operator.md is stale: run `npm run generate` and commit it',
  );
});

test('the table has the controller-runtime series with their labels, and no replaced aiops_* series', () => {
  const docs = new Map(operatorMetricDocs().map((d) => [d.name, d]));
  const want: Record<string, [string, string[]]> = {
    controller_runtime_reconcile_total: ['counter', ['controller', 'result']],
    controller_runtime_reconcile_errors_total: ['counter', ['controller']],
    controller_runtime_terminal_reconcile_errors_total: ['counter', ['controller']],
    controller_runtime_reconcile_panics_total: ['counter', ['controller']],
    controller_runtime_reconcile_time_seconds: ['histogram', ['controller']],
    controller_runtime_max_concurrent_reconciles: ['gauge', ['controller']],
    controller_runtime_active_workers: ['gauge', ['controller']],
    workqueue_depth: ['gauge', ['name', 'controller']],
    workqueue_adds_total: ['counter', ['name', 'controller']],
    workqueue_queue_duration_seconds: ['histogram', ['name', 'controller']],
    workqueue_work_duration_seconds: ['histogram', ['name', 'controller']],
    workqueue_retries_total: ['counter', ['name', 'controller']],
    workqueue_unfinished_work_seconds: ['gauge', ['name', 'controller']],
    workqueue_longest_running_processor_seconds: ['gauge', ['name', 'controller']],
    rest_client_requests_total: ['counter', ['code', 'method', 'host']],
    leader_election_master_status: ['gauge', ['name']],
    process_cpu_seconds_total: ['counter', []],
    process_resident_memory_bytes: ['gauge', []],
    process_start_time_seconds: ['gauge', []],
  };
  for (const [name, [type, labels]] of Object.entries(want))
    assert.deepEqual([docs.get(name)?.type, docs.get(name)?.labels], [type, labels], name);
  assert.deepEqual(
    [...docs.keys()].filter((n) => /^aiops_(process|nodejs|reconcile|workqueue|leader)/.test(n)),
    [],
  );
});

test('metricsTable escapes pipes and folds newlines in a help text', () => {
  const table = metricsTable([{ name: 'x_total', type: 'counter', labels: ['a'], help: 'one | two\nthree' }]);
  assert.match(table, /\| `x_total` \| counter \| `a` \| one \\\| two three \|/);
  assert.deepEqual(readMetricsTable(`${README_MARKERS.begin}\n${table}${README_MARKERS.end}`), [
    { name: 'x_total', type: 'counter', labels: ['a'], help: 'one | two three' },
  ]);
});
