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

import { type Block, type Expr, type FilterOp, type JsonPathTemplate, type Step } from './jsonpath-parse.ts';

export {
  JsonPathParseError,
  MAX_TEMPLATE_LENGTH,
  parseJsonPath,
  type JsonPathTemplate,
} from './jsonpath-parse.ts';

/** Most values one evaluation may produce, intermediate ones included. */
export const MAX_VALUES = 1_000_000;

/** A template that failed on the document (an index out of range, a comparison of unlike types). */
export class JsonPathEvalError extends Error {
  override readonly name = 'JsonPathEvalError';
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
