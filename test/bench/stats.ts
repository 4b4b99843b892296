// Small statistics and table printing for `npm run bench`: percentiles of millisecond
// samples and aligned rows, so every section reports the same way.

/** The p-th percentile (0-100) of `samples` by nearest rank; NaN for an empty list. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Median of `samples`. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Runs `fn` `n` times sequentially and returns each duration in milliseconds. */
export async function timeRuns(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Prints a section heading and aligned rows to stdout. */
export function printTable(
  title: string,
  header: readonly string[],
  rows: readonly (readonly string[])[],
): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write(`\n## ${title}\n${line(header)}\n${rows.map(line).join('\n')}\n`);
}

/** Formats milliseconds with sensible precision. */
export function ms(x: number): string {
  return x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(0)} ms`;
}

/** Formats a ratio as `1.23×`. */
export function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}
