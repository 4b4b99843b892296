import assert from 'node:assert/strict';
import { test } from 'node:test';
import { palette } from './format.ts';
import { renderChart, type ChartInput } from './simulate-chart.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const HOUR = 3_600_000;
/** 10 hours of one sample a minute: 0.2, with 0.95 in hour 3 and 0.05 in hour 7. */
const samples = Array.from({ length: 600 }, (_, i) => ({
  at: T0 + i * 60_000,
  value: i >= 180 && i < 240 ? 0.95 : i >= 420 && i < 480 ? 0.05 : 0.2,
}));
const base: ChartInput = {
  samples,
  from: T0,
  to: T0 + 10 * HOUR,
  threshold: 0.8,
  lessThan: false,
  marks: [{ at: T0 + 3 * HOUR + 120_000, kind: 'action' }],
  width: 66,
};

test('renderChart: as wide as asked, the threshold, breaches as #, a mark under each action', () => {
  const lines = renderChart(base, palette(false)).trimEnd().split('\n');
  assert.ok(
    lines.every((l) => l.length <= 66),
    lines.join('\n'),
  );
  const plot = lines.slice(0, 8);
  assert.match(plot[0] ?? '', /^0\.95 \| +#{6} *$/, 'the breach, in its slice of the window, at the top');
  assert.match(
    plot.find((l) => l.startsWith(' 0.8'))?.replace(/-/g, '') ?? 'x',
    /^ 0\.8 \|$/,
    'the threshold row',
  );
  assert.ok(
    plot.some((l) => l.includes('*')),
    'values within the threshold',
  );
  const marks = lines[9] ?? '';
  const plotStart = (plot[0] ?? '').indexOf('|') + 1;
  assert.equal(marks.indexOf('^'), (plot[0] ?? '').indexOf('#'), 'the action under the breach');
  assert.ok(marks.indexOf('^') >= plotStart);
  assert.match(lines.at(-2) ?? '', /^ +2026-03-01 00:00 +2026-03-01 10:00$/);
  assert.match(lines.at(-1) ?? '', /\* metric {3}# in breach {3}- threshold > 0\.8 {3}\^ action$/);
  assert.ok(!lines.join('').includes('\u001b['), 'no colour with colour off');
});

test('renderChart: LessThan shows each slice at its lowest; marks of waiting and dry runs; colour on', () => {
  const below = renderChart({ ...base, threshold: 0.1, lessThan: true, marks: [] }, palette(false));
  assert.match(
    below,
    /^ 0\.1 \|-+#{6}-+$/m,
    'the dip below the threshold in breach, a row too close to tell apart',
  );
  assert.match(below, /^0\.95 \| +\*{6} *$/m, 'the slice of 0.95 at its lowest, not in breach');
  assert.doesNotMatch(below, /\^/, 'no mark without actions');
  const waits = renderChart(
    {
      ...base,
      marks: [
        { at: T0 + HOUR, kind: 'approval' },
        { at: T0 + 2 * HOUR, kind: 'dryRun' },
      ],
    },
    palette(false),
  );
  assert.match(waits, /^ +a +d *$/m);
  assert.match(waits, /a would wait for approval {3}d dry run$/m);
  const coloured = renderChart(base, palette(true));
  assert.ok(coloured.includes('\u001b[31m#\u001b[39m'), 'a breach in red');
});

test('renderChart: a flat series, none at all, a narrow terminal', () => {
  const flat = renderChart(
    { ...base, samples: samples.map((s) => ({ ...s, value: 0.8 })), marks: [] },
    palette(false),
  );
  assert.match(flat, /^ 0\.8 \|\*+$/m, 'on the threshold, not in breach');
  const none = renderChart({ ...base, samples: [], marks: [] }, palette(false));
  assert.doesNotMatch(none, /[*#]\s*\|/);
  const narrow = renderChart({ ...base, width: 10 }, palette(false));
  assert.ok(
    narrow.split('\n').some((l) => l.length > 10),
    'at least the narrowest plot',
  );
});
