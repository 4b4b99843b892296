// A label selector string checked as the apiserver parses it (apimachinery's labels.Parse:
// its lexer, grammar and the key and value rules of each requirement), so a selector a
// tenant wrote where the operator reads it (a /scale's status.selector) is found unusable
// before it is sent on a LIST, which the apiserver would answer 400. Pure; it only says
// whether the string parses and, when not, why, in the apiserver's words where they matter.

/** Whether a selector string parses: ok, or the first error as the apiserver would state it. */
export type SelectorCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

type Token = 'id' | 'in' | 'notin' | '!' | '!=' | '(' | ')' | ',' | '=' | '==' | '>' | '<' | 'end' | 'error';

interface Scanned {
  readonly tok: Token;
  readonly lit: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SYMBOLS = new Set<string>(['!', '!=', '(', ')', ',', '=', '==', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

/** The tokens of `s`, up to and including `end` (a NUL ends the string, as Go's lexer reads it). */
function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  const at = (): string => (pos < s.length ? (s[pos] ?? '\0') : '\0');
  for (;;) {
    while (WHITESPACE.has(at())) pos++;
    const ch = at();
    if (ch === '\0') {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    if (SPECIAL.has(ch)) {
      let buffer = '';
      let last: Scanned | undefined;
      while (SPECIAL.has(at())) {
        buffer += at();
        if (SYMBOLS.has(buffer)) {
          last = { tok: buffer as Token, lit: buffer };
          pos++;
        } else if (last !== undefined) break;
        else pos++;
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let word = '';
    while (at() !== '\0' && !SPECIAL.has(at()) && !WHITESPACE.has(at())) word += s[pos++] ?? '';
    out.push({ tok: word === 'in' || word === 'notin' ? word : 'id', lit: word });
  }
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a qualified name (validation.IsQualifiedName), or undefined when it is one. */
export function labelKeyError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `key '${key}': a qualified name has at most one '/'`;
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined && (prefix === '' || prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    return `key '${key}': its prefix must be a DNS subdomain of at most 253 characters`;
  if (name === undefined || name === '') return `key '${key}': its name part must be non-empty`;
  if (name.length > 63) return `key '${key}': its name part must be no more than 63 characters`;
  if (!NAME.test(name))
    return `key '${key}': its name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
  return undefined;
}

/** Why `value` is not a label value (validation.IsValidLabelValue), or undefined when it is one. */
export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return `value '${value}': must be no more than 63 characters`;
  if (!VALUE.test(value))
    return `value '${value}': must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
  return undefined;
}

const INT64 = 2n ** 63n;

/** Whether `v` is a base-10 integer that fits 64 bits, as Go's strconv.ParseInt reads one. */
function isInt64(v: string): boolean {
  if (!/^[+-]?\d+$/.test(v)) return false;
  const n = BigInt(v);
  return n >= -INT64 && n < INT64;
}

class Parser {
  readonly #items: Scanned[];
  #pos = 0;

  constructor(items: Scanned[]) {
    this.#items = items;
  }

  /** The next token; `in` and `notin` read as identifiers where values are expected (`values`). */
  peek(values: boolean): Scanned {
    const item = this.#items[this.#pos] ?? { tok: 'end', lit: '' };
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'id', lit: item.lit } : item;
  }

  take(values: boolean): Scanned {
    const item = this.peek(values);
    if (this.#pos < this.#items.length - 1) this.#pos++;
    return item;
  }

  /** The whole selector; throws the first error. */
  selector(): void {
    for (;;) {
      const next = this.peek(true);
      if (next.tok === 'end') return;
      if (next.tok !== 'id' && next.tok !== '!')
        throw new Error(`found '${next.lit}', expected: !, identifier, or 'end of string'`);
      try {
        this.requirement();
      } catch (err) {
        throw new Error(`unable to parse requirement: ${(err as Error).message}`, { cause: err });
      }
      const after = this.take(true);
      if (after.tok === 'end') return;
      if (after.tok !== ',') throw new Error(`found '${after.lit}', expected: ',' or 'end of string'`);
      const again = this.peek(true);
      if (again.tok !== 'id' && again.tok !== '!')
        throw new Error(`found '${again.lit}', expected: identifier after ','`);
    }
  }

  requirement(): void {
    let key = this.take(true);
    const absent = key.tok === '!';
    if (absent) key = this.take(true);
    if (key.tok !== 'id') throw new Error(`found '${key.lit}', expected: identifier`);
    const bad = labelKeyError(key.lit);
    if (bad !== undefined) throw new Error(bad);
    const next = this.peek(true).tok;
    if (absent || next === 'end' || next === ',') return;
    const op = this.take(false);
    let values: string[];
    switch (op.tok) {
      case 'in':
      case 'notin':
        values = this.list();
        break;
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<':
        values = [this.exact()];
        break;
      default:
        throw new Error(`found '${op.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    if ((op.tok === '>' || op.tok === '<') && !values.every(isInt64))
      throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
    for (const v of values) {
      const invalid = labelValueError(v);
      if (invalid !== undefined) throw new Error(invalid);
    }
  }

  list(): string[] {
    const open = this.take(true);
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const first = this.peek(true);
    if (first.tok === ')') {
      this.take(true);
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',')
      throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
    const values: string[] = [];
    for (;;) {
      const item = this.take(true);
      if (item.tok === 'id') {
        values.push(item.lit);
        const next = this.peek(true);
        if (next.tok === ')') break;
        if (next.tok !== ',') throw new Error(`found '${next.lit}', expected: ',' or ')'`);
      } else if (item.tok === ',') {
        values.push('');
        const next = this.peek(true);
        if (next.tok === ')') break;
        if (next.tok === ',') this.take(true);
      } else throw new Error(`found '${item.lit}', expected: ',', or identifier`);
    }
    const close = this.take(true);
    if (close.tok !== ')') throw new Error(`found '${close.lit}', expected: ')'`);
    return values;
  }

  exact(): string {
    const next = this.peek(true);
    if (next.tok === 'end' || next.tok === ',') return '';
    const value = this.take(true);
    if (value.tok !== 'id') throw new Error(`found '${value.lit}', expected: identifier`);
    return value.lit;
  }
}

/**
 * Checks `selector` as the apiserver's labels.Parse does: requirements `k`, `!k`, `k=v`,
 * `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k>n`, `k<n` separated by commas, each key
 * a qualified name and each value a label value. The empty string selects everything.
 */
export function checkLabelSelector(selector: string): SelectorCheck {
  try {
    new Parser(lex(selector)).selector();
    return { ok: true };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}
