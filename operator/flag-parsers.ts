// Parsers of the operator's flag values that are not plain integers, text or switches (those
// are lib/options-table.ts'): Go durations as controller-runtime's flags take them, its
// `[host]:port` bind addresses and zap log levels, the LLM allow-list, a temperature.
// Each throws InvalidArgumentError, which commander reports as a usage error (exit 2).

import { InvalidArgumentError } from 'commander';
import { parseGoDuration } from '../lib/go-duration.ts';
import { parseAllowlist, type AllowRule } from './llm/policy.ts';

/** The LLM endpoint allow-list (llm/policy.ts' syntax). */
export function allowlist(value: string): AllowRule[] {
  try {
    return parseAllowlist(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** The name of an environment variable. */
export function envName(value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    throw new InvalidArgumentError(`expected an environment variable name, got "${value}"`);
  return value;
}

/** A sampling temperature from 0 to 2. */
export function temperature(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 2)
    throw new InvalidArgumentError(`expected a temperature from 0 to 2, got "${value}"`);
  return n;
}

/** A number above zero. */
export function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

/** Where an endpoint listens, from controller-runtime's `[host]:port` form. */
export interface HostPort {
  /** IP to bind; `undefined` when the address leaves it out (`:8080`). */
  readonly host?: string;
  readonly port: number;
}

/**
 * Parses a controller-runtime bind address: `:8080`, `127.0.0.1:8080`, `[::1]:8080`. The
 * value "0" (controller-runtime's "off") is refused: this operator always serves its endpoints.
 */
export function hostPort(value: string): HostPort {
  if (value.trim() === '0')
    throw new InvalidArgumentError(
      '"0" (off) is not supported: the operator always serves /metrics, /healthz and /readyz; give [host]:port',
    );
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    throw new InvalidArgumentError(`expected [host]:port such as :8080 or 127.0.0.1:8080, got "${value}"`);
  const host = m[1] ?? m[2] ?? '';
  return host === '' ? { port } : { host, port };
}

/**
 * controller-runtime's `--zap-log-level`: debug, info, error, or an integer verbosity > 0
 * (any is debug here); plus warn. Returns one of the operator's levels.
 */
export function logLevel(value: string): 'debug' | 'info' | 'warn' | 'error' {
  const v = value.trim().toLowerCase();
  if (v === 'debug' || v === 'info' || v === 'warn' || v === 'error') return v;
  if (v === 'panic' || v === 'dpanic' || v === 'fatal') return 'error';
  if (/^[1-9]\d*$/.test(v)) return 'debug';
  throw new InvalidArgumentError(`expected debug, info, warn, error or a verbosity > 0, got "${value}"`);
}

/** `--zap-encoder`'s values; the refusal is commander's for its choices. */
export function encoding(value: string): 'json' | 'console' {
  if (value !== 'json' && value !== 'console')
    throw new InvalidArgumentError('Allowed choices are json, console.');
  return value;
}

/** Parses a Go duration ("500ms", "15s", "1m30s", "1h") into ms, as controller-runtime's flags do. */
export function duration(value: string): number {
  const ms = parseGoDuration(value.trim());
  if (ms === undefined)
    throw new InvalidArgumentError(`expected a duration like 500ms, 15s, 1m30s or 1h, got "${value}"`);
  return ms;
}

/** A Go duration above zero, in ms (`--max-query-range`, `--min-query-resolution`). */
export function positiveDuration(value: string): number {
  const ms = duration(value);
  if (ms <= 0) throw new InvalidArgumentError(`expected a duration above zero, got "${value}"`);
  return ms;
}
