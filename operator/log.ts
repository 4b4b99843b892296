// Structured JSON logs, one object per line on stdout: time, level, msg, and fields such
// as `key` (namespace/name of the object being reconciled), so logs can be filtered per object.

/** Log levels in increasing severity. */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Extra fields of one line; `key` by convention names the object. */
export type Fields = Readonly<Record<string, unknown>>;

/** A JSON-lines logger. */
export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** A logger that adds `fields` to every line. */
  with(fields: Fields): Logger;
}

/** A logger writing lines at `level` (default info) and above to `write` (default stdout). */
export function createLogger(
  level: Level = 'info',
  write: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  base: Fields = {},
): Logger {
  const emit = (lvl: Level, msg: string, fields: Fields = {}): void => {
    if (ORDER[lvl] < ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

/** Parses a --log-level value; throws with the allowed values on anything else. */
export function parseLevel(value: string): Level {
  if (value in ORDER) return value as Level;
  throw new Error(`--log-level must be one of ${Object.keys(ORDER).join(', ')}, got "${value}"`);
}
