import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_POINTS_PER_QUERY, parseWindow, rangeChunks, sinceMs, STEP_MS } from './simulate-window.ts';

const NOW = Date.parse('2026-03-08T00:00:00Z');
const DAY = 86_400_000;

test('parseWindow: --since before --to (default now, 24h); --from to --to; a --to after now is now', () => {
  assert.deepEqual(parseWindow({}, NOW), { from: NOW - DAY, to: NOW });
  assert.deepEqual(parseWindow({ since: '7d' }, NOW), { from: NOW - 7 * DAY, to: NOW });
  assert.deepEqual(parseWindow({ since: '90m', to: '2026-03-07T00:00:00Z' }, NOW), {
    from: NOW - DAY - 90 * 60_000,
    to: NOW - DAY,
  });
  assert.deepEqual(parseWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00+01:00' }, NOW), {
    from: NOW - 7 * DAY,
    to: NOW - 6 * DAY - 3_600_000,
  });
  assert.deepEqual(parseWindow({ from: '2026-03-07T00:00:00Z', to: '2027-01-01T00:00:00Z' }, NOW), {
    from: NOW - DAY,
    to: NOW,
  });
  assert.equal(sinceMs('1d12h'), 1.5 * DAY);
  assert.equal(sinceMs('1dx'), undefined);
});

test('parseWindow: refuses with a usage error what names no window of at most 31 days', () => {
  const table: [Parameters<typeof parseWindow>[0], RegExp][] = [
    [{ since: '1h', from: '2026-03-01T00:00:00Z' }, /cannot be combined/],
    [{ since: 'yesterday' }, /invalid --since "yesterday"/],
    [{ since: '0' }, /invalid --since/],
    [{ from: '2026-03-01' }, /invalid --from "2026-03-01": use an RFC 3339 time/],
    [
      { from: '2026-03-05T00:00:00Z', to: '2026-03-04T00:00:00Z' },
      /--from 2026-03-05T00:00:00.000Z is not before --to/,
    ],
    [{ since: '32d' }, /the window is 32 days; at most 31 days/],
  ];
  for (const [flags, want] of table)
    assert.throws(
      () => parseWindow(flags, NOW),
      (err: Error) => err.name === 'CliError' && want.test(err.message),
    );
  assert.doesNotThrow(() => parseWindow({ since: '31d' }, NOW));
});

test('rangeChunks: one grid, each query at most 11,000 points, the last ending at the window end', () => {
  const w = { from: NOW - 7 * DAY, to: NOW };
  const chunks = rangeChunks(w);
  assert.equal(chunks.length, Math.ceil((7 * DAY) / STEP_MS / MAX_POINTS_PER_QUERY));
  assert.equal(chunks[0]?.from, w.from);
  assert.equal(chunks.at(-1)?.to, w.to);
  let points = 0;
  for (const [i, c] of chunks.entries()) {
    const n = (c.to - c.from) / STEP_MS + 1;
    assert.ok(n <= MAX_POINTS_PER_QUERY, `chunk ${i}: ${n} points`);
    assert.equal((c.from - w.from) % STEP_MS, 0, 'on the grid');
    if (i > 0) assert.equal(c.from, (chunks[i - 1]?.to ?? 0) + STEP_MS, 'no point read twice or missed');
    points += Math.floor(n);
  }
  assert.equal(points, (7 * DAY) / STEP_MS + 1);
  assert.deepEqual(rangeChunks({ from: 0, to: 10 * STEP_MS }, STEP_MS, 4), [
    { from: 0, to: 3 * STEP_MS },
    { from: 4 * STEP_MS, to: 7 * STEP_MS },
    { from: 8 * STEP_MS, to: 10 * STEP_MS },
  ]);
});
