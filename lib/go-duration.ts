// Durations written as Go's time.ParseDuration reads them (`500ms`, `15s`, `1m30s`, `1h`,
// `2h45m`, `1.5h`, `0`), so flags take what every controller-runtime operator and kubectl
// take. Negative durations are refused: no setting of ours means anything below zero.

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// Micro as U+00B5 (micro sign) and U+03BC (Greek mu), escaped: one non-Latin-1 character in a
// regular expression literal, which esbuild leaves as written, makes V8 hold the whole
// operator bundle's source as a two-byte string (3.2 MiB of heap instead of 1.6).
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/**
 * Milliseconds in `text` (rounded to the nearest ms), or undefined when it is not a Go
 * duration: one or more number+unit terms with no spaces, or a bare `0`; a leading `+` is
 * accepted, a leading `-` is not.
 */
export function parseGoDuration(text: string): number | undefined {
  const s = text.startsWith('+') ? text.slice(1) : text;
  if (s === '0') return 0;
  if (s === '') return undefined;
  let ms = 0;
  TERM.lastIndex = 0;
  while (TERM.lastIndex < s.length) {
    const at = TERM.lastIndex;
    const m = TERM.exec(s);
    if (m === null || m.index !== at) return undefined;
    ms += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Go's spelling of `ms` milliseconds, as time.Duration.String writes it: `1m30s`, `1h0m0s`, `500ms`, `0s`. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
