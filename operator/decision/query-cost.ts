// The cost bound on a tenant's PromQL: confinement keeps a query inside its
// namespace, but `max_over_time(x[1d:1ms])` confined is still 86 million evaluations that one
// tenant makes the shared Prometheus hold in memory. As Thanos' and Cortex's query frontends do,
// a query is refused before it is sent when it would read a wider window or evaluate at a finer
// step than the operator allows (`--max-query-range`, `--min-query-resolution`).
//
// What is bounded, walking the parsed query so every nesting is covered:
// - the window each selector reads: a range selector's range plus the ranges of every subquery
//   around it (`max_over_time(rate(x[5m])[1h:10s])` reads 1h5m of x), at most maxRangeMs;
// - the resolution of every subquery: written (an omitted one is Prometheus' evaluation
//   interval, which the operator cannot see) and at least minResolutionMs.
// Offsets and `@` are not bounded: they move a window without widening it, so
// `rate(x[5m] offset 1w)` costs what `rate(x[5m])` costs (week-over-week comparisons stay
// possible). Durations are evaluated as Prometheus does (units, plain seconds, the arithmetic
// of duration expressions); one that cannot be worked out here (`step()`, `range()`, Inf) is
// refused rather than guessed.

import type { parser } from '@prometheus-io/lezer-promql';

/** A node of the parsed query (lezer's SyntaxNode, named through the parser confine.ts uses). */
export type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

/** Limits on what one query may make Prometheus do; both in milliseconds. */
export interface QueryBounds {
  /** Widest window any selector may read, enclosing subquery ranges added (`--max-query-range`). */
  readonly maxRangeMs: number;
  /** Finest resolution a subquery may have (`--min-query-resolution`). */
  readonly minResolutionMs: number;
}

/** The flags' defaults: a window of 1h, a subquery step of 10s (at most 360 steps per subquery). */
export const DEFAULT_QUERY_BOUNDS: QueryBounds = Object.freeze({
  maxRangeMs: 3_600_000,
  minResolutionMs: 10_000,
});

/** Prometheus' duration units (model.ParseDuration), in order, with their length in seconds. */
const UNITS = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_SECONDS = [365 * 86_400, 7 * 86_400, 86_400, 3600, 60, 1, 0.001];

/**
 * Seconds of a duration literal: `1h30m` as Prometheus reads it, or a number of seconds
 * (`300`, `1.5`, `1e3`, `0x10`). A number JavaScript reads differently from Go is read as at
 * least Go's value (`010` is 10 here, 8 in Go), never less; undefined when it is not finite.
 */
function literalSeconds(text: string): number | undefined {
  const units = text === '' ? null : UNITS.exec(text);
  if (units !== null)
    return units
      .slice(1)
      .reduce(
        (s, n: string | undefined, i) => s + (n === undefined ? 0 : Number(n) * (UNIT_SECONDS[i] ?? 0)),
        0,
      );
  const seconds = text.trim() === text ? Number(text) : Number.NaN;
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** The binary operators of duration expressions, on seconds as Prometheus computes them. */
const OPERATORS: Readonly<Record<string, (a: number, b: number) => number>> = {
  Add: (a, b) => a + b,
  Sub: (a, b) => a - b,
  Mul: (a, b) => a * b,
  Div: (a, b) => a / b,
  Mod: (a, b) => a % b,
  Pow: (a, b) => a ** b,
};

/** Seconds of a DurationExpr node, in floating point as Prometheus computes them; undefined when it cannot be worked out here. */
function seconds(node: SyntaxNode, query: string): number | undefined {
  const parts: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) parts.push(c);
  const [a, b, c] = parts;
  let s: number | undefined;
  if (parts.length === 1 && a?.name === 'NumberDurationLiteralInDurationContext')
    s = literalSeconds(query.slice(a.from, a.to));
  else if (parts.length === 1 && a?.name === 'DurationExpr') s = seconds(a, query);
  else if (parts.length === 2 && a?.name === 'UnaryOp' && b?.name === 'DurationExpr') {
    const inner = seconds(b, query);
    const sign = query.slice(a.from, a.to);
    s = inner === undefined ? undefined : sign === '-' ? -inner : sign === '+' ? inner : undefined;
  } else if (parts.length === 3 && a?.name === 'DurationExpr' && c?.name === 'DurationExpr' && b) {
    const op = OPERATORS[b.name];
    const left = seconds(a, query);
    const right = seconds(c, query);
    if (op !== undefined && left !== undefined && right !== undefined) s = op(left, right);
  }
  return s !== undefined && Number.isFinite(s) ? s : undefined;
}

/**
 * Milliseconds of a DurationExpr node as Prometheus takes them: its seconds made a whole
 * number of nanoseconds (Go's time.Duration, truncated). Undefined when it cannot be worked out.
 */
export function durationMs(node: SyntaxNode, query: string): number | undefined {
  const s = seconds(node, query);
  return s === undefined ? undefined : Math.trunc(s * 1e9) / 1e6;
}

/**
 * Go's spelling of `ms` (time.Duration.String, as the flags are written: `1h0m0s`, `1m30s`,
 * `10s`, `500ms`), or plain seconds when Go's would mislead (negative).
 */
function spell(ms: number): string {
  if (ms < 0 || !Number.isFinite(ms)) return `${ms / 1000}s`;
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = Number(((ms % 60_000) / 1000).toFixed(6));
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}

/**
 * Why `top` (the parsed `query`, free of syntax errors) costs more than `bounds` allow, naming
 * the bound and its flag; undefined when it is within them. Pure.
 */
export function costRefusal(top: SyntaxNode, query: string, bounds: QueryBounds): string | undefined {
  const maxRange = `--max-query-range ${spell(bounds.maxRangeMs)}`;
  const minStep = `--min-query-resolution ${spell(bounds.minResolutionMs)}`;
  // The window read by enclosing subqueries, innermost last.
  const around: number[] = [0];
  let refusal: string | undefined;
  const text = (n: SyntaxNode): string => {
    const inner = n.firstChild;
    const head = inner ? query.slice(inner.from, inner.to) : '';
    const shown =
      (head.length > 60 ? `${head.slice(0, 59)}…` : head) + query.slice(inner?.to ?? n.from, n.to);
    return shown.length > 160 ? `${shown.slice(0, 159)}…` : shown;
  };
  const tooWide = (n: SyntaxNode, window: number, own: number): string =>
    window === own
      ? `${text(n)} reads a ${spell(own)} window, wider than ${maxRange}`
      : `${text(n)} reads a ${spell(window)} window with the subqueries around it, wider than ${maxRange}`;
  top.cursor().iterate(
    (ref) => {
      if (refusal !== undefined) return false;
      if (ref.name === 'DurationExpr' || ref.name === 'OffsetDurationExpr') return false;
      if (ref.name !== 'MatrixSelector' && ref.name !== 'SubqueryExpr') return undefined;
      const n = ref.node;
      const durations = n.getChildren('DurationExpr').filter((d) => d.from > (n.firstChild?.from ?? n.from));
      const [rangeNode, stepNode] = durations;
      const range = rangeNode && durationMs(rangeNode, query);
      if (rangeNode === undefined || range === undefined) {
        refusal = `${text(n)}: the range ${rangeNode ? text(rangeNode) : ''} cannot be worked out before the query runs; write it as a duration such as 5m`;
        return false;
      }
      const window = (around.at(-1) ?? 0) + Math.max(0, range);
      if (window > bounds.maxRangeMs) refusal = tooWide(n, window, range);
      else if (ref.name === 'SubqueryExpr') {
        const step = stepNode && durationMs(stepNode, query);
        if (stepNode === undefined)
          refusal = `${text(n)} leaves its resolution to Prometheus' evaluation interval; write one no finer than ${minStep}, e.g. [${text(rangeNode)}:${spell(bounds.minResolutionMs)}]`;
        else if (step === undefined)
          refusal = `${text(n)}: the resolution ${text(stepNode)} cannot be worked out before the query runs; write it as a duration such as 1m`;
        else if (step < bounds.minResolutionMs)
          refusal = `${text(n)} evaluates every ${spell(step)}, finer than ${minStep}`;
        else around.push(window);
      }
      return refusal === undefined ? undefined : false;
    },
    (ref) => {
      if (ref.name === 'SubqueryExpr') around.pop();
    },
  );
  return refusal;
}
