// The parsing half of kubectl's JSONPath dialect (jsonpath.ts says what the dialect is and
// evaluates it): a template becomes blocks of steps, and every mistake client-go would report,
// even those it finds only while printing, is refused here, before the server is asked.
// Bounded: at most MAX_TEMPLATE_LENGTH characters, filters and unions nested at most 16 deep.

/** Longest template accepted (characters). */
export const MAX_TEMPLATE_LENGTH = 4096;
/** Deepest nesting of filters and unions inside one another. */
const MAX_DEPTH = 16;

/** A template that cannot be parsed; the message is client-go's where it has one. */
export class JsonPathParseError extends Error {
  override readonly name = 'JsonPathParseError';
}

/** One `[start:end:step]` bound as client-go keeps it. */
interface Param {
  readonly known: boolean;
  readonly value: number;
  /** `end` of a single index `[i]`: i+1, and 0 (from `[-1]`) means the length. */
  readonly derived?: boolean;
}

export type FilterOp = '<' | '>' | '<=' | '>=' | '==' | '!=';
const FILTER_OPS: readonly string[] = ['<', '>', '<=', '>=', '==', '!='];

/** One step of an expression; an expression maps a list of values to a list of values. */
export type Step =
  | { readonly t: 'field'; readonly name: string }
  | { readonly t: 'text'; readonly text: string }
  | { readonly t: 'literal'; readonly value: number | boolean }
  | { readonly t: 'array'; readonly params: readonly [Param, Param, Param] }
  | { readonly t: 'filter'; readonly left: Expr; readonly op: FilterOp | 'exists'; readonly right: Expr }
  | { readonly t: 'wildcard' }
  | { readonly t: 'recursive' }
  | { readonly t: 'union'; readonly exprs: readonly Expr[] }
  | { readonly t: 'identifier'; readonly name: string };
export type Expr = readonly Step[];

/** A piece of a template: literal text, one `{expression}`, or a `{range}` with its body. */
export type Block =
  | { readonly t: 'text'; readonly text: string }
  | { readonly t: 'expr'; readonly expr: Expr }
  | { readonly t: 'range'; readonly over: Expr; readonly body: readonly Block[] };

/** A parsed template. */
export interface JsonPathTemplate {
  /** The template as given. */
  readonly source: string;
  readonly blocks: readonly Block[];
}

type Flat = { readonly t: 'text'; readonly text: string } | { readonly t: 'action'; readonly steps: Expr };

const isTerminator = (c: string | undefined): boolean => c === undefined || ' \t\r\n.,[]$@{}'.includes(c);
const isAlphaNumeric = (c: string | undefined): boolean => c !== undefined && /^[\p{L}\p{Nd}_]$/u.test(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && /^\p{Nd}$/u.test(c);

/** Go's %#U: `U+0025 '%'`. */
function describeChar(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(c) ? `${hex} '${c}'` : hex;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\u0007',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** Go's strconv.Unquote, single quotes allowed too (client-go's UnquoteExtend). */
function unquote(quoted: string): string {
  const quote = quoted[0] ?? '';
  const body = quoted.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] ?? '';
    if (c === quote) throw new JsonPathParseError(`unquote string ${quoted} error invalid syntax`);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i] ?? '';
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) out += simple;
    else if (e === quote) out += e;
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex))
        throw new JsonPathParseError(`unquote string ${quoted} error invalid syntax`);
      const code = parseInt(hex, 16);
      if (code > 0x10ffff || (code >= 0xd800 && code < 0xe000 && e !== 'x'))
        throw new JsonPathParseError(`unquote string ${quoted} error invalid syntax`);
      out += String.fromCodePoint(code);
      i += n;
    } else if (/^[0-7]$/.test(e)) {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255)
        throw new JsonPathParseError(`unquote string ${quoted} error invalid syntax`);
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else throw new JsonPathParseError(`unquote string ${quoted} error invalid syntax`);
  }
  return out;
}

/** client-go's Parser, its mutual recursion turned into loops where it was tail calls. */
class Parser {
  readonly #src: string;
  #pos = 0;
  readonly #depth: number;

  constructor(src: string, depth: number) {
    this.#src = src;
    this.#depth = depth;
  }

  /** The whole input as text and `{…}` actions. */
  parse(): Flat[] {
    const out: Flat[] = [];
    while (this.#pos < this.#src.length) {
      const open = this.#src.indexOf('{', this.#pos);
      if (open < 0) {
        out.push({ t: 'text', text: this.#src.slice(this.#pos) });
        break;
      }
      if (open > this.#pos) out.push({ t: 'text', text: this.#src.slice(this.#pos, open) });
      this.#pos = open + 1;
      out.push({ t: 'action', steps: this.#action() });
    }
    return out;
  }

  /** The steps of one action, up to and past its `}`. */
  #action(): Step[] {
    const steps: Step[] = [];
    for (;;) {
      const rest = this.#src.slice(this.#pos, this.#pos + 3);
      if (rest.startsWith('}')) {
        this.#pos++;
        return steps;
      }
      if (rest === '[?(') {
        steps.push(this.#filter());
        continue;
      }
      if (rest.startsWith('..')) {
        if (steps.at(-1)?.t === 'recursive')
          throw new JsonPathParseError('invalid multiple recursive descent');
        this.#pos += 2;
        steps.push({ t: 'recursive' });
        if (isAlphaNumeric(this.#src[this.#pos])) steps.push(this.#field());
        continue;
      }
      const c = this.#src[this.#pos];
      if (c === undefined || c === '\r' || c === '\n') throw new JsonPathParseError('unclosed action');
      if (c === ' ' || c === '@' || c === '$') this.#pos++;
      else if (c === '[') steps.push(...this.#array());
      else if (c === '"' || c === "'") steps.push(this.#quote(c));
      else if (c === '.') {
        this.#pos++;
        steps.push(this.#field());
      } else if (c === '+' || c === '-' || isDigit(c)) steps.push(this.#number());
      else if (isAlphaNumeric(c)) steps.push(this.#identifier());
      else throw new JsonPathParseError(`unrecognized character in action: ${describeChar(c)}`);
    }
  }

  #identifier(): Step {
    const start = this.#pos;
    while (!isTerminator(this.#src[this.#pos])) this.#pos++;
    const word = this.#src.slice(start, this.#pos);
    if (word === 'true' || word === 'false') return { t: 'literal', value: word === 'true' };
    return { t: 'identifier', name: word };
  }

  #number(): Step {
    const start = this.#pos;
    if (this.#src[this.#pos] === '+' || this.#src[this.#pos] === '-') this.#pos++;
    while (this.#src[this.#pos] === '.' || isDigit(this.#src[this.#pos])) this.#pos++;
    const text = this.#src.slice(start, this.#pos);
    if (/^[+-]?\d+$/.test(text) || /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text))
      return { t: 'literal', value: Number(text) };
    throw new JsonPathParseError(`cannot parse number ${text}`);
  }

  /** A field name up to the next unescaped terminator; backslashes are dropped (`a\.b`). */
  #field(): Step {
    const start = this.#pos;
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === '\\') this.#pos += 2;
      else if (isTerminator(c)) break;
      else this.#pos++;
    }
    const raw = this.#src.slice(start, Math.min(this.#pos, this.#src.length));
    return raw === '*' ? { t: 'wildcard' } : { t: 'field', name: raw.replaceAll('\\', '') };
  }

  #quote(quote: string): Step {
    const start = this.#pos;
    this.#pos++;
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === undefined || c === '\n') throw new JsonPathParseError('unterminated quoted string');
      this.#pos++;
      if (c === quote && this.#src[this.#pos - 2] !== '\\') break;
    }
    return { t: 'text', text: unquote(this.#src.slice(start, this.#pos)) };
  }

  /** `[…]`: a union, a `'key'`, or an index or slice. */
  #array(): Step[] {
    const close = this.#src.indexOf(']', this.#pos);
    const newline = this.#src.indexOf('\n', this.#pos);
    if (close < 0 || (newline >= 0 && newline < close)) throw new JsonPathParseError('unterminated array');
    let text = this.#src.slice(this.#pos + 1, close);
    this.#pos = close + 1;
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1)
      return [{ t: 'union', exprs: parts.map((p) => this.#sub(`[${p.replace(/^ +| +$/g, '')}]`)) }];
    const key = /^'([^']*)'$/.exec(text);
    if (key) return [...this.#sub(`.${key[1] ?? ''}`)];
    const slice = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/.exec(text);
    if (!slice) throw new JsonPathParseError(`invalid array index ${text}`);
    const params: Param[] = [];
    for (let i = 0; i < 3; i++) {
      let v = slice[i + 1] ?? '';
      if (v !== '') {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === '') params.push({ known: false, value: 0 });
        else if (/^-?\d+$/.test(v)) params.push({ known: true, value: Number(v) });
        else throw new JsonPathParseError(`array index ${v} is not a number`);
      } else if (i === 1) params.push({ known: true, value: (params[0]?.value ?? 0) + 1, derived: true });
      else params.push({ known: false, value: 0 });
    }
    const [a, b, c] = params as [Param, Param, Param];
    return [{ t: 'array', params: [a, b, c] }];
  }

  /** `[?(left op right)]` or `[?(path)]` (exists). */
  #filter(): Step {
    this.#pos += 3;
    const start = this.#pos;
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === undefined || c === '\n') throw new JsonPathParseError('unterminated filter');
      this.#pos++;
      if (c === '"' || c === "'") {
        if (!begin) {
          begin = true;
          pair = c;
        } else if (this.#src[this.#pos - 2] !== '\\' && c === pair) end = true;
      } else if (c === ')' && begin === end) break;
    }
    if (this.#src[this.#pos] !== ']') throw new JsonPathParseError('unclosed array expect ]');
    this.#pos++;
    const text = this.#src.slice(start, this.#pos - 2);
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/s.exec(text);
    if (!m) return { t: 'filter', left: this.#sub(text), op: 'exists', right: [] };
    const op = m[2] ?? '';
    if (!FILTER_OPS.includes(op)) throw new JsonPathParseError(`unrecognized filter operator ${op}`);
    return { t: 'filter', left: this.#sub(m[1] ?? ''), op: op as FilterOp, right: this.#sub(m[3] ?? '') };
  }

  /** client-go's parseAction: `text` parsed as the template `{text}`, its first action's steps. */
  #sub(text: string): Expr {
    if (this.#depth >= MAX_DEPTH) throw new JsonPathParseError('template nested too deeply');
    const first = new Parser(`{${text}}`, this.#depth + 1).parse()[0];
    return first?.t === 'action' ? first.steps : [];
  }
}

/** Rejects identifiers anywhere but at the head of an action (`range`, `end`). */
function checkSteps(steps: Expr): void {
  for (const s of steps) {
    if (s.t === 'identifier') throw new JsonPathParseError(`unrecognized identifier ${s.name}`);
    if (s.t === 'filter') {
      checkSteps(s.left);
      checkSteps(s.right);
    }
    if (s.t === 'union') s.exprs.forEach(checkSteps);
  }
}

/**
 * Parses a template of kubectl's JSONPath dialect. Throws JsonPathParseError with client-go's
 * message (or, for what client-go finds only while printing, a message in the same style).
 */
export function parseJsonPath(source: string): JsonPathTemplate {
  if (source.length > MAX_TEMPLATE_LENGTH)
    throw new JsonPathParseError(`template longer than ${MAX_TEMPLATE_LENGTH} characters`);
  const flat = new Parser(source, 0).parse();
  const root: Block[] = [];
  const stack: { over: Expr; body: Block[] }[] = [];
  const current = (): Block[] => stack.at(-1)?.body ?? root;
  for (const f of flat) {
    if (f.t === 'text') {
      current().push(f);
      continue;
    }
    const [head, ...rest] = f.steps;
    if (head?.t === 'identifier' && head.name === 'range') {
      checkSteps(rest);
      stack.push({ over: rest, body: [] });
    } else if (head?.t === 'identifier' && head.name === 'end') {
      if (rest.length > 0) throw new JsonPathParseError('{end} takes nothing after it');
      const done = stack.pop();
      if (done === undefined) throw new JsonPathParseError('not in range, nothing to end');
      current().push({ t: 'range', over: done.over, body: done.body });
    } else {
      checkSteps(f.steps);
      current().push({ t: 'expr', expr: f.steps });
    }
  }
  if (stack.length > 0) throw new JsonPathParseError('{range} without {end}');
  return { source, blocks: root };
}
