// The operator's Grafana dashboard, as JSON in Grafana's dashboard model (schemaVersion 39),
// written here rather than exported from a Grafana (Grafana is AGPL: never built or depended
// on here). Its panels read the series the operator really serves; the real-Prometheus test
// (test/monitoring/scrape.cluster.test.ts) runs every panel's expression against a scraped operator
// and requires series from each. objects.ts ships it in a ConfigMap for Grafana's sidecar.

/** One panel's query, as the test runs it. */
export interface PanelQuery {
  readonly panel: string;
  readonly expr: string;
}

/** A timeseries (or stat) panel: title, unit, queries with their legends. */
interface PanelDef {
  readonly title: string;
  readonly type: 'timeseries' | 'stat';
  readonly unit: string;
  readonly description: string;
  readonly targets: readonly { readonly expr: string; readonly legend: string }[];
}

/** The panels of the dashboard for job `job`, in reading order (two per row). */
export function panelDefs(job: string): PanelDef[] {
  const j = `job="${job}"`;
  const rate = (metric: string, by: string, extra = ''): string =>
    `sum by (${by}) (rate(${metric}{${j}${extra}}[5m]))`;
  const quantile = (q: number, metric: string): string =>
    `histogram_quantile(${q}, sum by (le) (rate(${metric}_bucket{${j}}[5m])))`;
  return [
    {
      title: 'Replicas up',
      type: 'stat',
      unit: 'none',
      description: 'Operator replicas Prometheus scrapes successfully (the Deployment runs 2).',
      targets: [{ expr: `sum(up{${j},endpoint="https"})`, legend: 'up' }],
    },
    {
      title: 'Leader',
      type: 'stat',
      unit: 'none',
      description: 'leader_election_master_status by pod: 1 on the replica that reconciles.',
      targets: [{ expr: `sum by (pod) (leader_election_master_status{${j}})`, legend: '{{pod}}' }],
    },
    {
      title: 'Reconciles by result',
      type: 'timeseries',
      unit: 'ops',
      description: 'controller_runtime_reconcile_total per second, by result.',
      targets: [{ expr: rate('controller_runtime_reconcile_total', 'result'), legend: '{{result}}' }],
    },
    {
      title: 'Reconcile errors',
      type: 'timeseries',
      unit: 'ops',
      description: 'Reconcile errors per second; terminal errors (no retry helps) and panics beside them.',
      targets: [
        { expr: rate('controller_runtime_reconcile_errors_total', 'controller'), legend: 'errors' },
        {
          expr: rate('controller_runtime_terminal_reconcile_errors_total', 'controller'),
          legend: 'terminal',
        },
        { expr: rate('controller_runtime_reconcile_panics_total', 'controller'), legend: 'panics' },
      ],
    },
    {
      title: 'Reconcile time',
      type: 'timeseries',
      unit: 's',
      description: 'controller_runtime_reconcile_time_seconds, 50th and 99th percentiles.',
      targets: [
        { expr: quantile(0.5, 'controller_runtime_reconcile_time_seconds'), legend: 'p50' },
        { expr: quantile(0.99, 'controller_runtime_reconcile_time_seconds'), legend: 'p99' },
      ],
    },
    {
      title: 'Workers',
      type: 'timeseries',
      unit: 'none',
      description: 'Reconciles running now against --max-concurrent-reconciles.',
      targets: [
        { expr: `sum by (controller) (controller_runtime_active_workers{${j}})`, legend: 'active' },
        { expr: `max by (controller) (controller_runtime_max_concurrent_reconciles{${j}})`, legend: 'max' },
      ],
    },
    {
      title: 'Work queue',
      type: 'timeseries',
      unit: 'none',
      description: 'Keys waiting (depth), adds and retries per second.',
      targets: [
        { expr: `sum by (name) (workqueue_depth{${j}})`, legend: 'depth' },
        { expr: rate('workqueue_adds_total', 'name'), legend: 'adds/s' },
        { expr: rate('workqueue_retries_total', 'name'), legend: 'retries/s' },
      ],
    },
    {
      title: 'Work queue latency',
      type: 'timeseries',
      unit: 's',
      description: 'How long keys wait in the queue and how long their work takes (99th percentile).',
      targets: [
        { expr: quantile(0.99, 'workqueue_queue_duration_seconds'), legend: 'queued p99' },
        { expr: quantile(0.99, 'workqueue_work_duration_seconds'), legend: 'work p99' },
      ],
    },
    {
      title: 'Apiserver requests',
      type: 'timeseries',
      unit: 'reqps',
      description: 'rest_client_requests_total per second by code and method (`<error>`: no answer).',
      targets: [{ expr: rate('rest_client_requests_total', 'code, method'), legend: '{{method}} {{code}}' }],
    },
    {
      title: 'AITasks',
      type: 'timeseries',
      unit: 'none',
      description: 'AITasks with a remediation under way and AITasks Stalled.',
      targets: [
        { expr: `max(aiops_remediations_in_flight{${j}})`, legend: 'remediating' },
        { expr: `max(aiops_tasks_stalled{${j}})`, legend: 'stalled' },
      ],
    },
    {
      title: 'Guardrail refusals',
      type: 'timeseries',
      unit: 'none',
      description: 'Remediations refused in the last hour, by reason.',
      targets: [
        {
          expr: `sum by (reason) (increase(aiops_guardrail_refusals_total{${j}}[1h]))`,
          legend: '{{reason}}',
        },
      ],
    },
    {
      title: 'LLM breakers and status writes',
      type: 'timeseries',
      unit: 'none',
      description: 'LLM circuit breakers open, and AITask status writes per second (steady state: none).',
      targets: [
        { expr: `max(aiops_llm_circuit_breakers_open{${j}})`, legend: 'breakers open' },
        { expr: `sum(rate(aiops_status_writes_total{${j}}[5m]))`, legend: 'status writes/s' },
      ],
    },
    {
      title: 'Conversions',
      type: 'timeseries',
      unit: 'reqps',
      description:
        'ConversionReviews per second by result, failures by reason, and connections the webhook closed at accept by reason.',
      targets: [
        { expr: rate('aiops_conversion_requests_total', 'result'), legend: '{{result}}' },
        { expr: rate('aiops_conversion_failures_total', 'reason'), legend: 'failed: {{reason}}' },
        {
          expr: rate('aiops_conversion_connections_refused_total', 'reason'),
          legend: 'connections refused: {{reason}}',
        },
      ],
    },
    {
      title: 'Webhook certificate',
      type: 'stat',
      unit: 's',
      description: 'Time left before the serving certificate each pod presents expires.',
      targets: [
        {
          expr: `min by (pod) (aiops_conversion_certificate_expiration_timestamp_seconds{${j}}) - time()`,
          legend: '{{pod}}',
        },
      ],
    },
    {
      title: 'Memory',
      type: 'timeseries',
      unit: 'bytes',
      description: 'Resident memory and V8 heap used, by pod.',
      targets: [
        {
          expr: `sum by (pod) (process_resident_memory_bytes{${j},endpoint="https"})`,
          legend: 'rss {{pod}}',
        },
        { expr: `sum by (pod) (nodejs_heap_size_used_bytes{${j},endpoint="https"})`, legend: 'heap {{pod}}' },
      ],
    },
    {
      title: 'CPU and event loop',
      type: 'timeseries',
      unit: 's',
      description: 'CPU seconds per second and the event loop lag (99th percentile), by pod.',
      targets: [
        {
          expr: `sum by (pod) (rate(process_cpu_seconds_total{${j},endpoint="https"}[5m]))`,
          legend: 'cpu {{pod}}',
        },
        {
          expr: `max by (pod) (nodejs_eventloop_lag_p99_seconds{${j},endpoint="https"})`,
          legend: 'lag {{pod}}',
        },
      ],
    },
  ];
}

/** Every panel's queries, as the test runs them. */
export function panelQueries(job: string): PanelQuery[] {
  return panelDefs(job).flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The dashboard's stable uid (Grafana links and the sidecar key on it). */
export const DASHBOARD_UID = 'aiops-operator';

/** The dashboard JSON model for job `job`, with a Prometheus datasource variable. */
export function dashboard(job: string): Record<string, unknown> {
  const ds = { type: 'prometheus', uid: '${datasource}' };
  return {
    uid: DASHBOARD_UID,
    title: 'aiops operator',
    tags: ['aiops', 'controller-runtime'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' }],
    },
    panels: panelDefs(job).map((p, i) => ({
      id: i + 1,
      title: p.title,
      description: p.description,
      type: p.type,
      datasource: ds,
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      options: {},
      targets: p.targets.map((t, k) => ({
        refId: String.fromCharCode(65 + k),
        datasource: ds,
        expr: t.expr,
        legendFormat: t.legend,
      })),
    })),
  };
}
