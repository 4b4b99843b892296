// The terminal chart of `kubectl aiops simulate`: the metric against the threshold over the
// window, as wide as the terminal, with a mark under each would-be action, readable without
// colour: `*` a value within the threshold, `#` one in breach, `-` the threshold, `^` an
// action, `a` a decision that would wait for approval, `d` one a dry run stopped. Each column
// is a slice of the window and shows its worst value (the highest for GreaterThan, the lowest
// for LessThan), so no breach falls between columns. Pure.

import type { Sample } from '../operator/decision/replay.ts';
import type { Palette } from './format.ts';

/** Rows of the plot (default). */
export const CHART_HEIGHT = 8;

/** Narrowest plot drawn, in columns; a narrower terminal gets this and wraps. */
const MIN_PLOT_WIDTH = 20;

/** A mark under the plot: an action, or a decision that waited or ran dry. */
export interface ChartMark {
  readonly at: number;
  readonly kind: 'action' | 'approval' | 'dryRun';
}

/** What the chart draws. */
export interface ChartInput {
  readonly samples: readonly Sample[];
  /** The window, ms since the epoch. */
  readonly from: number;
  readonly to: number;
  readonly threshold: number;
  /** The trigger's operator is LessThan (a breach is below the threshold). */
  readonly lessThan: boolean;
  readonly marks: readonly ChartMark[];
  /** Columns of the whole chart, labels included. */
  readonly width: number;
  readonly height?: number;
}

const MARK_CHAR: Readonly<Record<ChartMark['kind'], string>> = { action: '^', approval: 'a', dryRun: 'd' };
/** Which mark a column shows when several fall in it. */
const MARK_RANK: Readonly<Record<string, number>> = { ' ': 0, d: 1, a: 2, '^': 3 };

/** A value for an axis label: at most 4 significant digits. */
function label(v: number): string {
  return String(Number(v.toPrecision(4)));
}

/** The chart's lines (with a legend), each ending in a newline. */
export function renderChart(c: ChartInput, pal: Palette): string {
  const height = Math.max(3, c.height ?? CHART_HEIGHT);
  const finite = c.samples.filter((s) => Number.isFinite(s.value));
  const values = [...finite.map((s) => s.value), c.threshold];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi === lo) {
    lo -= 1;
    hi += 1;
  }
  const labels = [label(hi), label(c.threshold), label(lo)];
  const pad = Math.max(...labels.map((l) => l.length));
  const width = Math.max(MIN_PLOT_WIDTH, c.width - pad - 2);
  const slice = (c.to - c.from) / width;
  const column = (at: number): number => Math.min(width - 1, Math.max(0, Math.floor((at - c.from) / slice)));
  const worst: (number | undefined)[] = Array.from({ length: width }, () => undefined);
  for (const s of finite) {
    const i = column(s.at);
    const w = worst[i];
    worst[i] = w === undefined ? s.value : c.lessThan ? Math.min(w, s.value) : Math.max(w, s.value);
  }
  const row = (v: number): number => Math.round(((hi - v) / (hi - lo)) * (height - 1));
  const thresholdRow = row(c.threshold);
  const grid = Array.from({ length: height }, (_, r) =>
    Array.from({ length: width }, () => (r === thresholdRow ? pal.dim('-') : ' ')),
  );
  for (const [i, v] of worst.entries()) {
    if (v === undefined) continue;
    const breach = c.lessThan ? v < c.threshold : v > c.threshold;
    const line = grid[row(v)];
    if (line !== undefined) line[i] = breach ? pal.red('#') : '*';
  }
  const marks = Array.from({ length: width }, () => ' ');
  for (const m of c.marks) {
    const i = column(m.at);
    const char = MARK_CHAR[m.kind];
    if ((MARK_RANK[char] ?? 0) > (MARK_RANK[marks[i] ?? ' '] ?? 0)) marks[i] = char;
  }
  const axisLabel = (r: number): string =>
    r === 0
      ? (labels[0] ?? '')
      : r === thresholdRow
        ? (labels[1] ?? '')
        : r === height - 1
          ? (labels[2] ?? '')
          : '';
  const lines = grid.map((cells, r) => `${axisLabel(r).padStart(pad)} |${cells.join('')}`.trimEnd());
  lines.push(`${' '.repeat(pad)} +${'-'.repeat(width)}`);
  if (marks.some((m) => m !== ' '))
    lines.push(`${' '.repeat(pad)}  ${marks.map((m) => (m === '^' ? pal.yellow(m) : m)).join('')}`.trimEnd());
  const start = new Date(c.from).toISOString().slice(0, 16).replace('T', ' ');
  const end = new Date(c.to).toISOString().slice(0, 16).replace('T', ' ');
  lines.push(`${' '.repeat(pad + 2)}${start}${end.padStart(Math.max(end.length + 1, width - start.length))}`);
  const present = new Set(c.marks.map((m) => m.kind));
  const legend = [
    '* metric',
    '# in breach',
    `- threshold ${c.lessThan ? '<' : '>'} ${label(c.threshold)}`,
    ...(present.has('action') ? ['^ action'] : []),
    ...(present.has('approval') ? ['a would wait for approval'] : []),
    ...(present.has('dryRun') ? ['d dry run'] : []),
  ];
  lines.push(`${' '.repeat(pad + 2)}${legend.join('   ')}`);
  return `${lines.join('\n')}\n`;
}
