// Structured JSON logging shared by the operator, the webhook and the harness tools:
// one JSON object per line on stdout, with `level`, `ts`, `component`, `msg` and
// caller-supplied fields (e.g. the object key), so logs can be grepped and parsed at 3 a.m.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  with(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Lowest level written (default `info`). */
  level?: LogLevel;
  /** Where lines go (default process.stdout). */
  write?: (line: string) => void;
}

/** Creates a JSON-lines logger for `component`. Errors in fields are rendered as their message. */
export function createLogger(
  component: string,
  opts: LoggerOptions = {},
  base: Record<string, unknown> = {},
): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stdout.write(line));
  const emit = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < min) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level, component, msg, ...base };
    for (const [k, v] of Object.entries(fields)) entry[k] = v instanceof Error ? v.message : v;
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => createLogger(component, opts, { ...base, ...fields }),
  };
}

/** Parses a `--log-level` value; throws a usage-style error for anything else. */
export function parseLogLevel(value: string): LogLevel {
  if (value in ORDER) return value as LogLevel;
  throw new Error(`invalid log level "${value}": use one of ${Object.keys(ORDER).join(', ')}`);
}
