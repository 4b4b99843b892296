// The command line of `npm test`: which files, and which of them run beside the CPU hog.
// Pure, so the flag's forms are tested without starting a cluster.

/** What `npm test -- ARGS` asks for. */
export interface TestArgs {
  /** Files named on the command line, in order (none: every test file). */
  readonly files: readonly string[];
  /**
   * Path prefixes of the files run beside the CPU hog: `['']` (every file) for `--busy`, the
   * comma-separated list of `--busy=PREFIX,...` (empty entries dropped), `[]` without the flag.
   * The last `--busy` form given wins.
   */
  readonly busy: readonly string[];
}

/** Splits `npm test`'s arguments into files and the `--busy` prefixes. */
export function parseTestArgs(argv: readonly string[]): TestArgs {
  const isBusy = (a: string): boolean => a === '--busy' || a.startsWith('--busy=');
  const flag = argv.findLast(isBusy);
  const busy =
    flag === undefined
      ? []
      : flag === '--busy'
        ? ['']
        : flag
            .slice('--busy='.length)
            .split(',')
            .filter((p) => p !== '');
  return { files: argv.filter((a) => !isBusy(a)), busy };
}

/** Whether `file` runs beside the hog under `busy` prefixes (parseTestArgs). */
export const runsBusy = (busy: readonly string[], file: string): boolean =>
  busy.some((p) => file.startsWith(p));
