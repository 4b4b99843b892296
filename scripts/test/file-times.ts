// The end-of-run summary of `npm test`: which test files took longest, so the slowest suites
// are the ones shortened. Pure: it reads the lines file-times-reporter.ts wrote and formats them.

/** One test file's wall time as the node:test runner measured it. */
export interface FileTime {
  /** Path relative to the repository root. */
  readonly file: string;
  /** Milliseconds from the file's process start to its exit. */
  readonly ms: number;
  readonly passed: boolean;
}

/** The FileTime records in `text` (JSON lines); lines that are not one are skipped. */
export function parseFileTimes(text: string): FileTime[] {
  const out: FileTime[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as Partial<FileTime>;
      if (typeof v.file === 'string' && typeof v.ms === 'number' && typeof v.passed === 'boolean')
        out.push({ file: v.file, ms: v.ms, passed: v.passed });
    } catch {
      // a line cut short by an interrupted run
    }
  }
  return out;
}

/** `m:ss` for `ms` milliseconds (rounded to the second). */
export function minutes(ms: number): string {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The `n` (default 10) slowest files, slowest first (ties by path), as aligned lines
 * `  m:ss  path` with ` (failed)` after a file that failed.
 */
export function slowestLines(times: readonly FileTime[], n = 10): string[] {
  const top = [...times].sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file)).slice(0, n);
  const width = Math.max(0, ...top.map((t) => minutes(t.ms).length));
  return top.map((t) => `  ${minutes(t.ms).padStart(width)}  ${t.file}${t.passed ? '' : ' (failed)'}`);
}
