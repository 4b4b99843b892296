// Structured logging shared by the operator, the webhook and the harness tools, in the shape
// controller-runtime's zap logger writes, so the log pipelines and habits built for Go
// operators read ours too: one JSON object per line with `ts` (RFC 3339, ms), `level`,
// `logger` (the component), `msg`, then the caller's fields (e.g. the object key); an Error
// in a field is written as its message, and on an error line its stack goes to `stacktrace`.
// The `console` encoding is zap's development one, for a person at a terminal (`npm start`):
// `ts  LEVEL  logger  msg  {fields}` on one line.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** How lines are written: `json` (zap's production encoder) or `console` (its development one). */
export type LogEncoding = 'json' | 'console';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line; a string `component` among them names it `<logger>.<component>` instead. */
  with(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Lowest level written (default `info`). */
  level?: LogLevel;
  /** Default `json`. */
  encoding?: LogEncoding;
  /** Where lines go (default process.stdout). */
  write?: (line: string) => void;
}

/** One line of `level` for `logger`, as `encoding` writes it (with its newline). */
export function formatLine(
  encoding: LogEncoding,
  ts: Date,
  level: LogLevel,
  logger: string,
  msg: string,
  fields: Record<string, unknown>,
): string {
  const rest: Record<string, unknown> = {};
  let stacktrace: string | undefined;
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) {
      rest[k] = v.message;
      if (level === 'error' && stacktrace === undefined && v.stack !== undefined) stacktrace = v.stack;
    } else rest[k] = v;
  }
  if (encoding === 'console') {
    const extra = Object.keys(rest).length > 0 ? `\t${JSON.stringify(rest)}` : '';
    const stack = stacktrace !== undefined ? `\n${stacktrace}` : '';
    return `${ts.toISOString()}\t${level.toUpperCase()}\t${logger}\t${msg}${extra}${stack}\n`;
  }
  const entry: Record<string, unknown> = { ts: ts.toISOString(), level, logger, msg };
  for (const [k, v] of Object.entries(rest)) if (!(k in entry)) entry[k] = v;
  if (stacktrace !== undefined) entry['stacktrace'] = stacktrace;
  return `${JSON.stringify(entry)}\n`;
}

/** Creates a logger for `component` (zap's `logger`). */
export function createLogger(
  component: string,
  opts: LoggerOptions = {},
  base: Record<string, unknown> = {},
): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const encoding = opts.encoding ?? 'json';
  const write = opts.write ?? ((line: string) => process.stdout.write(line));
  const emit = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < min) return;
    write(formatLine(encoding, new Date(), level, component, msg, { ...base, ...fields }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => {
      const { component: named, ...rest } = fields;
      // zap's Named: a `component` field names a child logger, "operator.conversion-webhook".
      return typeof named === 'string'
        ? createLogger(`${component}.${named}`, opts, { ...base, ...rest })
        : createLogger(component, opts, { ...base, ...fields });
    },
  };
}

/** Parses a `--log-level` value; throws a usage-style error for anything else. */
export function parseLogLevel(value: string): LogLevel {
  if (value in ORDER) return value as LogLevel;
  throw new Error(`invalid log level "${value}": use one of ${Object.keys(ORDER).join(', ')}`);
}
