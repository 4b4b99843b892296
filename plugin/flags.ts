// Parsing of the kubectl-style global flags the plugin implements itself (kubectl passes
// none of its own to plugins): output format, request timeout, colour. Pure functions.

import { parseGoDuration } from '../api/go-duration.ts';
import { UsageError } from './errors.ts';

/** Output formats; `wide` adds columns where a command has more to show. */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Values of `--color`. */
export const COLOR_MODES = ['auto', 'always', 'never'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

/** The global flags as commander hands them over. */
export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  output: string;
  requestTimeout: string;
  color: string;
}

/** Validates `-o`; throws UsageError naming the allowed values. */
export function parseOutput(value: string, allowed: readonly OutputFormat[] = OUTPUT_FORMATS): OutputFormat {
  const found = allowed.find((f) => f === value);
  if (found === undefined)
    throw new UsageError(`unsupported output format "${value}": use one of ${allowed.join(', ')}`);
  return found;
}

/**
 * Parses `--request-timeout` as kubectl does: `0` means no timeout, a bare integer is
 * seconds, otherwise a Go duration like `1m30s` or `500ms` (api/go-duration.ts). Returns milliseconds.
 */
export function parseRequestTimeout(value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const ms = parseGoDuration(v);
  if (ms === undefined)
    throw new UsageError(
      `invalid --request-timeout "${value}": use a duration like 30s, 1m or 0 (no timeout)`,
    );
  return ms;
}

/**
 * Whether to colour output: never when NO_COLOR is set (any non-empty value), else
 * `always`/`never` as asked, else (`auto`) only on a TTY.
 */
export function useColor(
  mode: string,
  isTTY: boolean,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (!COLOR_MODES.some((m) => m === mode))
    throw new UsageError(`invalid --color "${mode}": use auto, always or never`);
  if ((env['NO_COLOR'] ?? '') !== '') return false;
  return mode === 'always' || (mode === 'auto' && isTTY);
}
