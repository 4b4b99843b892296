// Small text formatters shared by the commands: kubectl-style ages, ANSI colour that can
// be switched off, borderless tables with cli-table3, JSON/YAML documents, and the two
// guards that keep tenant-written text from driving the reader's terminal: `visible` for
// values (every control, newline and tab included, shown as an escape) and `terminalSafe`
// for whole outputs (only the layout's newlines and tabs and the palette's own colours kept).

import Table from 'cli-table3';
import { dump } from 'js-yaml';
import { toYaml } from '../lib/yaml.ts';
import { CliError } from './errors.ts';
import type { Output } from './flags.ts';
import { executeJsonPath, JsonPathEvalError } from './jsonpath.ts';

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

/** The SGR parameters the palette writes: the only escape sequences output may carry. */
const PALETTE_SGR = [1, 2, 22, 31, 32, 33, 36, 39] as const;

/** A palette that colours only when `enabled`. */
export function palette(enabled: boolean): Palette {
  const sgr =
    (open: (typeof PALETTE_SGR)[number], close: (typeof PALETTE_SGR)[number]) =>
    (s: string): string =>
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

/**
 * Characters never written raw: C0 and C1 controls and DEL (Cc), format characters such as
 * bidi embeddings, overrides and isolates, zero-width and tag characters (Cf), the line and
 * paragraph separators, and lone surrogates. Not global: `test` keeps no state.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** `ch` as an escape a reader sees: `\n`, `\t`, `\r`, `\x1b` for C0, `\uXXXX` per UTF-16 unit else. */
function escape(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\t') return '\\t';
  if (ch === '\r') return '\\r';
  let out = '';
  for (let i = 0; i < ch.length; i++) {
    const c = ch.charCodeAt(i);
    out += c < 0x20 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * `text` with every character that does not print as itself shown as an escape (see
 * HIDDEN; newlines and tabs too, so a value cannot forge lines or columns). For values
 * interpolated into text output; printable text, backslashes included, is kept as is.
 */
export function visible(text: string): string {
  return text.replace(new RegExp(HIDDEN.source, 'gu'), escape);
}

/** `value` with `visible` applied to every string in it (keys included), for text renderers. */
export function visibleDeep<T>(value: T): T {
  return deep(value) as T;
}

function deep(value: unknown): unknown {
  if (typeof value === 'string') return visible(value);
  if (Array.isArray(value)) return value.map(deep);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [visible(k), deep(v)]));
  return value;
}

const KEPT_SGR = new RegExp(`\u001b\\[(?:${PALETTE_SGR.join('|')})m`, 'y');

/**
 * The last guard before a stream: `text` with every HIDDEN character escaped except the
 * newlines and tabs the layout writes and, when `colour`, the palette's own SGR sequences.
 * The escapes are `\uXXXX` for everything JSON.stringify leaves raw (DEL, C1, format
 * characters, U+2028/9), so a JSON document stays valid and decodes to the same value.
 */
export function terminalSafe(text: string, colour: boolean): string {
  let out = '';
  let from = 0;
  const hidden = new RegExp(HIDDEN.source, 'gu');
  for (let m = hidden.exec(text); m !== null; m = hidden.exec(text)) {
    const ch = m[0];
    if (ch === '\n' || ch === '\t') continue;
    KEPT_SGR.lastIndex = m.index;
    if (colour && ch === '\u001b' && KEPT_SGR.test(text)) continue;
    out += text.slice(from, m.index) + escape(ch);
    from = m.index + ch.length;
  }
  return out + text.slice(from);
}

/**
 * `value` as a YAML document in the project's one YAML style. js-yaml escapes controls and
 * U+2028/9 itself but writes format characters (bidi overrides, zero-width, tags) raw, in plain
 * scalars too; a document holding one is written with every string value double-quoted instead,
 * so the `\uXXXX` that terminalSafe puts in its place is a YAML escape of the same character
 * (in a mapping key, which js-yaml leaves plain, it reads as the escape's text).
 */
export function yamlDoc(value: unknown): string {
  const doc = toYaml(value);
  return HIDDEN.test(doc.replace(/[\n\t]/g, ''))
    ? dump(value, { lineWidth: -1, noRefs: true, forceQuotes: true, quoteStyle: 'double' })
    : doc;
}

/** Whether `output` prints a document (json, yaml, jsonpath) rather than text or names. */
export function isDocumentFormat(output: Output): boolean {
  return output.format === 'json' || output.format === 'yaml' || output.format === 'jsonpath';
}

/**
 * `doc` in the document format of `output`: JSON, YAML, or the JSONPath template applied to
 * the document `-o json` prints (no newline added, as kubectl). A template that fails on it
 * throws CliError (exit 1) with kubectl's "error executing jsonpath". Text formats get JSON.
 */
export function renderDocument(output: Output, doc: unknown): string {
  if (output.format === 'yaml') return yamlDoc(doc);
  if (output.format !== 'jsonpath') return jsonDoc(doc);
  const json = JSON.stringify(doc) as string | undefined;
  const data: unknown = json === undefined ? null : JSON.parse(json);
  try {
    return executeJsonPath(output.template, data, output.asJson);
  } catch (err) {
    if (err instanceof JsonPathEvalError)
      throw new CliError(
        `error executing jsonpath ${JSON.stringify(output.template.source)}: ${err.message}`,
      );
    throw err;
  }
}
