// kubectl's JSONPath dialect (`-o jsonpath=…`, `-o jsonpath-as-json=…`), a port of client-go's
// util/jsonpath: text outside `{}` is printed as written; inside, `.field`, `['key']`, `[i]`,
// `[start:end:step]`, `[*]`, `.*`, `..field`, unions `[a,b]`, filters `[?(@.type=="Ready")]`,
// quoted text `{"\n"}` and `{range …}…{end}`. Missing keys print nothing, as kubectl's default
// `--allow-missing-template-keys=true`; results of one `{}` are joined by spaces, objects and
// lists printed as compact JSON with sorted keys (Go's encoding/json). Pure and bounded: a
// template is at most MAX_TEMPLATE_LENGTH characters and an evaluation makes at most MAX_VALUES
// values, so no template can make the plugin spin or exhaust memory. Where client-go reports a
// mistake only while printing (an unknown identifier, an `{end}` without `{range}`, an unknown
// filter operator), this parser reports it up front, so every invalid template is refused
// before the server is asked.

/** Longest template accepted (characters). */
export const MAX_TEMPLATE_LENGTH = 4096;
/** Most values one evaluation may produce, intermediate ones included. */
export const MAX_VALUES = 1_000_000;
/** Deepest nesting of filters and unions inside one another. */
const MAX_DEPTH = 16;

/** A template that cannot be parsed; the message is client-go's where it has one. */
export class JsonPathParseError extends Error {
  override readonly name = 'JsonPathParseError';
}

/** A template that failed on the document (an index out of range, a comparison of unlike types). */
export class JsonPathEvalError extends Error {
  override readonly name = 'JsonPathEvalError';
}

/** One `[start:end:step]` bound as client-go keeps it. */
interface Param {
  readonly known: boolean;
  readonly value: number;
  /** `end` of a single index `[i]`: i+1, and 0 (from `[-1]`) means the length. */
  readonly derived?: boolean;
}

type FilterOp = '<' | '>' | '<=' | '>=' | '==' | '!=';
const FILTER_OPS: readonly string[] = ['<', '>', '<=', '>=', '==', '!='];

/** One step of an expression; an expression maps a list of values to a list of values. */
type Step =
  | { readonly t: 'field'; readonly name: string }
  | { readonly t: 'text'; readonly text: string }
  | { readonly t: 'literal'; readonly value: number | boolean }
  | { readonly t: 'array'; readonly params: readonly [Param, Param, Param] }
  | { readonly t: 'filter'; readonly left: Expr; readonly op: FilterOp | 'exists'; readonly right: Expr }
  | { readonly t: 'wildcard' }
  | { readonly t: 'recursive' }
  | { readonly t: 'union'; readonly exprs: readonly Expr[] }
  | { readonly t: 'identifier'; readonly name: string };
type Expr = readonly Step[];

/** A piece of a template: literal text, one `{expression}`, or a `{range}` with its body. */
type Block =
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

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The kind Go's text/template compares by; undefined for what it cannot compare. */
function basicKind(v: unknown): 'bool' | 'number' | 'string' | undefined {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return undefined;
}

function compare(left: unknown, right: unknown, op: FilterOp): boolean {
  const kl = basicKind(left);
  const kr = basicKind(right);
  if (kl === undefined || kr === undefined) throw new JsonPathEvalError('invalid type for comparison');
  if (kl !== kr) throw new JsonPathEvalError('incompatible types for comparison');
  if (op === '==') return left === right;
  if (op === '!=') return left !== right;
  if (kl === 'bool') throw new JsonPathEvalError('invalid type for comparison');
  const [l, r] = [left as number | string, right as number | string];
  if (op === '<') return l < r;
  if (op === '>') return l > r;
  if (op === '<=') return l <= r;
  return l >= r;
}

function kindName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Evaluation state: how many values may still be made. */
interface Budget {
  left: number;
}

function spend(budget: Budget, n: number): void {
  budget.left -= n;
  if (budget.left < 0)
    throw new JsonPathEvalError(`the template makes more than ${MAX_VALUES} values; narrow it`);
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return Object.values(v);
  return [];
}

function evalStep(input: readonly unknown[], step: Step, budget: Budget): unknown[] {
  const out: unknown[] = [];
  switch (step.t) {
    case 'text':
      out.push(step.text);
      break;
    case 'literal':
      for (let i = 0; i < input.length; i++) out.push(step.value);
      break;
    case 'field':
      for (const v of input)
        if (isObject(v) && Object.hasOwn(v, step.name))
          out.push(v[step.name] === undefined ? null : v[step.name]);
      break;
    case 'wildcard':
      for (const v of input) out.push(...children(v));
      break;
    case 'recursive': {
      const visit = (values: readonly unknown[]): void => {
        for (const v of values) {
          const c = children(v);
          if (c.length === 0) continue;
          spend(budget, 1);
          out.push(v);
          visit(c);
        }
      };
      visit(input);
      break;
    }
    case 'union':
      for (const e of step.exprs) out.push(...evalExpr(input, e, budget));
      break;
    case 'array':
      for (const v of input) {
        if (v === null || v === undefined) continue;
        if (!Array.isArray(v)) throw new JsonPathEvalError(`${kindName(v)} is not array or slice`);
        const len = v.length;
        const [p0, p1, p2] = step.params;
        let start = p0.known ? p0.value : 0;
        if (start < 0) start += len;
        let end = p1.known ? p1.value : len;
        if (end < 0 || (end === 0 && p1.derived === true)) end += len;
        if (end === start) continue;
        if (start >= len || start < 0)
          throw new JsonPathEvalError(`array index out of bounds: index ${start}, length ${len}`);
        if (end > len || end < 0)
          throw new JsonPathEvalError(`array index out of bounds: index ${end - 1}, length ${len}`);
        if (start > end)
          throw new JsonPathEvalError(`starting index ${start} is greater than ending index ${end}`);
        if (p2.known && p2.value <= 0) throw new JsonPathEvalError('step must be > 0');
        const by = p2.known ? p2.value : 1;
        for (let i = start; i < end; i += by) out.push(v[i]);
      }
      break;
    case 'filter':
      for (const v of input) {
        if (!Array.isArray(v))
          throw new JsonPathEvalError(`${kindName(v)} is not array or slice and cannot be filtered`);
        for (const item of v) {
          if (step.op === 'exists') {
            let found: unknown[] = [];
            try {
              found = evalExpr([item], step.left, budget);
            } catch (err) {
              if (!(err instanceof JsonPathEvalError) || budget.left < 0) throw err;
            }
            if (found.length > 0) out.push(item);
            continue;
          }
          const lefts = evalExpr([item], step.left, budget);
          if (lefts.length === 0) continue;
          if (lefts.length > 1) throw new JsonPathEvalError('can only compare one element at a time');
          const rights = evalExpr([item], step.right, budget);
          if (rights.length === 0) continue;
          if (rights.length > 1) throw new JsonPathEvalError('can only compare one element at a time');
          if (compare(lefts[0], rights[0], step.op)) out.push(item);
        }
      }
      break;
    case 'identifier':
      throw new JsonPathEvalError(`unrecognized identifier ${step.name}`);
  }
  spend(budget, out.length);
  return out;
}

function evalExpr(input: readonly unknown[], expr: Expr, budget: Budget): unknown[] {
  let cur: unknown[] = [...input];
  for (const step of expr) cur = evalStep(cur, step, budget);
  return cur;
}

/** The result lists of `blocks` on `data`, one per printed `{}` or text, ranges unrolled. */
function results(blocks: readonly Block[], data: unknown, budget: Budget, into: unknown[][]): void {
  for (const b of blocks) {
    if (b.t === 'text') into.push([b.text]);
    else if (b.t === 'expr') into.push(evalExpr([data], b.expr, budget));
    else for (const item of evalExpr([data], b.over, budget)) results(b.body, item, budget, into);
  }
}

/** `value` with every object's keys sorted, as Go's encoding/json writes maps. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isObject(value))
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys(value[k])]),
    );
  return value;
}

/** JSON as Go's encoding/json writes it: sorted keys, `<`, `>`, `&`, U+2028/9 escaped. */
export function goJson(value: unknown, indent = 0): string {
  const json = JSON.stringify(sortKeys(value), null, indent) as string | undefined;
  return (json ?? 'null').replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A number as Go's fmt.Print writes a JSON number (int64 whole, float64 %v otherwise). */
function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21) {
    const [mant, e] = n.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    return `${mant}e${sign}${e.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  return String(n);
}

/** One value as kubectl's JSONPath printer writes it. */
function text(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return goJson(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'string') return value;
  return typeof value === 'boolean' ? String(value) : 'null';
}

/**
 * Prints `template` on `data` as `kubectl -o jsonpath=` does (no newline is added), or, with
 * `asJson`, as `-o jsonpath-as-json=`: each result list a JSON array indented by four spaces.
 * Throws JsonPathEvalError when the template fails on this document.
 */
export function executeJsonPath(template: JsonPathTemplate, data: unknown, asJson = false): string {
  const lists: unknown[][] = [];
  results(template.blocks, data, { left: MAX_VALUES }, lists);
  return lists.map((list) => (asJson ? `${goJson(list, 4)}\n` : list.map(text).join(' '))).join('');
}
