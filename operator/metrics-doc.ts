// The Metrics table of docs/operator.md, made from the registry the operator serves: every series family
// on /metrics with its type, label names and help text, so the list cannot drift from the code.
// `npm run generate` writes it between README_MARKERS; metrics-doc.test.ts checks the page holds
// what this renders, and standard-metrics.cluster.test.ts that a running operator serves exactly these.

import type { Registry } from 'prom-client';
import { registerCacheMetrics } from './runtime/cache-metrics.ts';
import { createTelemetry } from './telemetry.ts';

/** The comments the table sits between in docs/operator.md. */
export const README_MARKERS = {
  begin: '<!-- metrics-table:begin (npm run generate writes this table from operator/metrics-doc.ts) -->',
  end: '<!-- metrics-table:end -->',
} as const;

/** One series family as the table lists it. */
export interface MetricDoc {
  readonly name: string;
  /** counter, gauge, histogram or summary. */
  readonly type: string;
  /** Label names, in declaration order (a histogram's `le` and a summary's `quantile` left out). */
  readonly labels: readonly string[];
  readonly help: string;
}

/** Families in the table's order: controller-runtime's, then ours, then the process and runtime's. */
const GROUPS = [
  'controller_runtime_',
  'workqueue_',
  'rest_client_',
  'leader_election_',
  'aiops_',
  'process_',
  'nodejs_',
];

function groupOf(name: string): number {
  const i = GROUPS.findIndex((p) => name.startsWith(p));
  return i < 0 ? GROUPS.length : i;
}

/** The families on `registry`, in the table's order (group, then name). */
export function metricDocs(registry: Registry): MetricDoc[] {
  return registry
    .getMetricsAsArray()
    .map((m) => ({
      name: m.name,
      type: String(m.type),
      labels: 'labelNames' in m && Array.isArray(m.labelNames) ? m.labelNames.map(String) : [],
      help: m.help,
    }))
    .sort((a, b) => groupOf(a.name) - groupOf(b.name) || a.name.localeCompare(b.name));
}

/** The families the operator's /metrics serves: its telemetry and the cache metrics, as assembly.ts registers them. */
export function operatorMetricDocs(): MetricDoc[] {
  const telemetry = createTelemetry();
  registerCacheMetrics(telemetry.registry, {});
  const docs = metricDocs(telemetry.registry);
  telemetry.registry.clear();
  return docs;
}

/** `text` with `|` and newlines made safe for a Markdown table cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll(/\s+/g, ' ').trim();
}

/** The Markdown table (with a trailing newline) of `docs`. */
export function metricsTable(docs: readonly MetricDoc[]): string {
  const rows = docs.map(
    (d) => `| \`${d.name}\` | ${d.type} | ${d.labels.map((l) => `\`${l}\``).join(', ')} | ${cell(d.help)} |`,
  );
  return ['| Series | Type | Labels | Meaning |', '| --- | --- | --- | --- |', ...rows, ''].join('\n');
}

/** `readme` with the table between README_MARKERS replaced by `table`; throws if the markers are missing. */
export function withMetricsTable(readme: string, table: string): string {
  const begin = readme.indexOf(README_MARKERS.begin);
  const end = readme.indexOf(README_MARKERS.end);
  if (begin < 0 || end < begin) throw new Error('docs/operator.md lacks the metrics-table markers');
  return `${readme.slice(0, begin + README_MARKERS.begin.length)}\n\n${table.trimEnd()}\n\n${readme.slice(end)}`;
}

/** The table between README_MARKERS in `readme`, read back into docs (help as `cell` leaves it); undefined without the markers. */
export function readMetricsTable(readme: string): MetricDoc[] | undefined {
  const begin = readme.indexOf(README_MARKERS.begin);
  const end = readme.indexOf(README_MARKERS.end);
  if (begin < 0 || end < begin) return undefined;
  const unquote = (s: string): string => s.trim().replace(/^`(.*)`$/, '$1');
  return readme
    .slice(begin + README_MARKERS.begin.length, end)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) => {
      const [name = '', type = '', labels = '', help = ''] = line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim());
      return {
        name: unquote(name),
        type,
        labels: labels === '' ? [] : labels.split(',').map(unquote),
        help: help.replaceAll('\\|', '|'),
      };
    });
}

/** `docs` as readMetricsTable reads them back from the rendered table. */
export function asRead(docs: readonly MetricDoc[]): MetricDoc[] {
  return docs.map((d) => ({ ...d, labels: [...d.labels], help: cell(d.help) }));
}
