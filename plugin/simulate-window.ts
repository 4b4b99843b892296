// The window `kubectl aiops simulate` replays and how it is read from Prometheus: `--since`
// or `--from`/`--to` made into one window of at most MAX_WINDOW_MS, and that window cut into
// range queries of at most Prometheus' MAX_POINTS_PER_QUERY points each, on one grid of
// STEP_MS from the window's start. Pure.

import { parseGoDuration } from '../lib/go-duration.ts';
import { UsageError } from './errors.ts';

/** Longest window replayed: 31 days, in ms. */
export const MAX_WINDOW_MS = 31 * 86_400_000;

/** Prometheus refuses a range query of more points than this (its own limit). */
export const MAX_POINTS_PER_QUERY = 11_000;

/** The range queries' resolution, in ms (15 s): the replay reads the metric at this grid. */
export const STEP_MS = 15_000;

/** `--since` when neither it nor `--from` is given. */
export const DEFAULT_SINCE = '24h';

/** A window, in ms since the epoch, `from` before `to`. */
export interface Window {
  readonly from: number;
  readonly to: number;
}

/** The window flags as commander hands them over. */
export interface WindowFlags {
  readonly since?: string;
  readonly from?: string;
  readonly to?: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time in ms, or UsageError naming `flag`. */
function time(flag: string, value: string): number {
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms))
    throw new UsageError(`invalid ${flag} "${value}": use an RFC 3339 time like 2026-03-01T00:00:00Z`);
  return ms;
}

/** A Go duration in ms, which may start with whole days (`7d`, `1d12h`), or undefined. */
export function sinceMs(text: string): number | undefined {
  const days = /^(\d+)d(.*)$/.exec(text);
  if (days === null) return parseGoDuration(text);
  const rest = days[2] === '' ? 0 : parseGoDuration(days[2] ?? '');
  return rest === undefined ? undefined : Number(days[1]) * 86_400_000 + rest;
}

/**
 * The window the flags name at `now` (ms): `--from` to `--to` (default now), or the `--since`
 * (a Go duration, or days first: `7d`; default 24h) before `--to`. A `--to` after `now` is `now`. Throws UsageError
 * for `--since` with `--from`, a bad time or duration, `--from` not before `--to`, and a
 * window over MAX_WINDOW_MS.
 */
export function parseWindow(flags: WindowFlags, now: number): Window {
  if (flags.since !== undefined && flags.from !== undefined)
    throw new UsageError('--since and --from cannot be combined: give one start');
  const to = Math.min(now, flags.to !== undefined ? time('--to', flags.to) : now);
  let from: number;
  if (flags.from !== undefined) from = time('--from', flags.from);
  else {
    const since = flags.since ?? DEFAULT_SINCE;
    const ms = sinceMs(since);
    if (ms === undefined || ms <= 0)
      throw new UsageError(`invalid --since "${since}": use a duration like 24h, 90m or 7d`);
    from = to - ms;
  }
  if (from >= to)
    throw new UsageError(
      `--from ${new Date(from).toISOString()} is not before --to ${new Date(to).toISOString()}`,
    );
  if (to - from > MAX_WINDOW_MS)
    throw new UsageError(
      `the window is ${Math.ceil((to - from) / 86_400_000)} days; at most 31 days are replayed: narrow --since or --from/--to`,
    );
  return { from, to };
}

/**
 * The range queries that read `w` at `stepMs`: consecutive pieces of one grid from `w.from`,
 * each of at most `maxPoints` points (start and end included), the last ending at `w.to`.
 */
export function rangeChunks(
  w: Window,
  stepMs: number = STEP_MS,
  maxPoints: number = MAX_POINTS_PER_QUERY,
): Window[] {
  const span = (maxPoints - 1) * stepMs;
  const out: Window[] = [];
  for (let start = w.from; start <= w.to; start += span + stepMs)
    out.push({ from: start, to: Math.min(w.to, start + span) });
  return out;
}
