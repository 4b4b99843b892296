// Small text formatters shared by the commands: kubectl-style ages, ANSI colour that can
// be switched off, borderless tables with cli-table3, and JSON/YAML documents.

import Table from 'cli-table3';
import { toYaml } from '../api/yaml.ts';

/** Age as kubectl prints it: `45s`, `12m`, `5h3m`, `3d4h`, `400d`. `<unknown>` for a bad time. */
export function age(from: string | undefined, now: Date): string {
  const t = from === undefined ? Number.NaN : Date.parse(from);
  if (Number.isNaN(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now.getTime() - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  return `${d}d`;
}

/** ANSI styling; every function is the identity when colour is off. */
export interface Palette {
  readonly red: (s: string) => string;
  readonly green: (s: string) => string;
  readonly yellow: (s: string) => string;
  readonly cyan: (s: string) => string;
  readonly bold: (s: string) => string;
  readonly dim: (s: string) => string;
}

/** A palette that colours only when `enabled`. */
export function palette(enabled: boolean): Palette {
  const sgr = (open: number, close: number) => (s: string) =>
    enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s;
  return {
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    bold: sgr(1, 22),
    dim: sgr(2, 22),
  };
}

/** Renders rows as kubectl does: upper-case headers, columns three spaces apart, no borders. */
export function table(head: readonly string[], rows: readonly (readonly string[])[], indent = ''): string {
  const t = new Table({
    head: head.map((h) => h.toUpperCase()),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '',
    },
    style: { 'padding-left': 0, 'padding-right': 3, head: [], border: [], compact: true },
  });
  t.push(...rows.map((r) => [...r]));
  return (
    t
      .toString()
      .split('\n')
      .map((line) => indent + line.trimEnd())
      .join('\n') + '\n'
  );
}

/** `value` as a JSON document (two-space indent, trailing newline). */
export function jsonDoc(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** `value` as a YAML document in the project's one YAML style. */
export function yamlDoc(value: unknown): string {
  return toYaml(value);
}
