// Confines a tenant's PromQL to one namespace, as prom-label-proxy does: every AITask's
// `trigger.query` runs with the operator's Prometheus access and its value lands in status
// and Events, so without this a tenant could read any series of any namespace. The query is
// parsed with the Prometheus project's own grammar (@prometheus-io/lezer-promql), never with
// regexes; every vector selector (alone, in a range or in a subquery) gets
// `namespace="<namespace>"`, inserted or replacing an equivalent matcher. What cannot be
// confined is refused with the reason: a syntax error, a namespace matcher that selects or
// could select another namespace, a label name or value with escapes, and `info()`, which
// reads `target_info` series no selector of the query names.
//
// Comments are removed before anything is inserted, so the query Prometheus runs has none: a
// matcher inserted after a `#` would be commented out (`{x="1" #,namespace="a"⏎}` ran across
// every namespace), and the grammar ends a comment only at `\n` where Prometheus also ends it
// at `\r`, so `foo # \r or bar` is one selector here but two there. Where the two parsers
// disagree on what is a comment, what this grammar calls one is gone.
//
// Given bounds, the same walk refuses a query that costs more than they allow
// (query-cost.ts: the window a selector reads, the resolution of a subquery), with its own
// reason, QueryTooExpensive; boundQuery applies those bounds alone, where confinement is off.

import { parser } from '@prometheus-io/lezer-promql';
import { costRefusal, type QueryBounds, type SyntaxNode } from './query-cost.ts';

/** The confined query, or why it is refused: it cannot be confined, or it costs more than the bounds. */
export type Confinement =
  | { readonly ok: true; readonly query: string }
  | { readonly ok: false; readonly reason: 'QueryRefused' | 'QueryTooExpensive'; readonly message: string };

/** The label prom-label-proxy and kube-state-metrics use for a series' namespace. */
export const NAMESPACE_LABEL = 'namespace';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface Edit {
  readonly from: number;
  readonly to: number;
  readonly text: string;
}

/** The text of a string literal without its quotes; undefined when it has escapes (not decided here). */
function literal(text: string): string | undefined {
  const body = text.slice(1, -1);
  return text.startsWith('`') || !body.includes('\\') ? body : undefined;
}

/** Label name of a matcher node: unquoted, or a quoted name without escapes; undefined otherwise. */
function labelName(matcher: SyntaxNode, query: string): string | undefined {
  const plain = matcher.getChild('LabelName');
  if (plain) return query.slice(plain.from, plain.to);
  const quoted = matcher.getChild('QuotedLabelName');
  return quoted ? literal(query.slice(quoted.from, quoted.to)) : undefined;
}

/** The edits confining one vector selector (none when it already is), or why it cannot be. */
function confineSelector(selector: SyntaxNode, query: string, namespace: string): Edit[] | string {
  const wanted = `${NAMESPACE_LABEL}="${namespace}"`;
  const text = query.slice(selector.from, selector.to);
  const matchers = selector.getChild('LabelMatchers');
  if (!matchers) return [{ from: selector.to, to: selector.to, text: `{${wanted}}` }];
  const edits: Edit[] = [];
  let confined = false;
  for (let m = matchers.firstChild; m; m = m.nextSibling) {
    if (m.name !== 'UnquotedLabelMatcher' && m.name !== 'QuotedLabelMatcher') continue;
    const name = labelName(m, query);
    if (name === undefined) return `${text}: a quoted label name with escapes cannot be checked`;
    if (name !== NAMESPACE_LABEL) continue;
    const opNode = m.getChild('MatchOp');
    const op = opNode ? query.slice(opNode.from, opNode.to) : '';
    const valueNode = m.getChild('StringLiteral');
    const value = valueNode ? literal(query.slice(valueNode.from, valueNode.to)) : undefined;
    if ((op !== '=' && op !== '=~') || value !== namespace)
      return `${text}: the matcher ${query.slice(m.from, m.to)} ${op === '=' ? 'selects another namespace than' : 'could select other namespaces than'} ${namespace}`;
    confined = true;
    if (op !== '=' || m.name !== 'UnquotedLabelMatcher') edits.push({ from: m.from, to: m.to, text: wanted });
  }
  if (confined) return edits;
  // First in the braces, after a quoted metric name: Prometheus 3 accepts that name only first
  // (`{"my.metric", …}`).
  const first = matchers.firstChild;
  if (first?.name === 'QuotedLabelName') return [{ from: first.to, to: first.to, text: `,${wanted}` }];
  const at = matchers.from + 1;
  return [{ from: at, to: at, text: first ? `${wanted},` : wanted }];
}

/** The edits applied to `query`, latest first so earlier offsets stay valid. */
function applyEdits(query: string, edits: readonly Edit[]): string {
  let out = query;
  for (const e of [...edits].sort((a, b) => b.from - a.from))
    out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}

/**
 * `query` without its comments, or the offset of its first syntax error. A comment runs to
 * the end of its line and the line break stays, so removing it never joins two tokens.
 */
function withoutComments(query: string): { readonly query: string } | { readonly errorAt: number } {
  const edits: Edit[] = [];
  let errorAt: number | undefined;
  parser.parse(query).iterate({
    enter: (ref) => {
      if (errorAt !== undefined) return false;
      if (ref.type.isError) errorAt = ref.from;
      else if (ref.name === 'LineComment') edits.push({ from: ref.from, to: ref.to, text: '' });
      return undefined;
    },
  });
  return errorAt === undefined ? { query: applyEdits(query, edits) } : { errorAt };
}

/** Confinements kept, most recently computed last (a Map keeps insertion order). */
const MEMO_SIZE = 1024;
const memo = new Map<string, Confinement>();

/** `compute` of `key`, from the memo when it was computed lately. */
function remembered(key: string, compute: () => Confinement): Confinement {
  const known = memo.get(key);
  if (known !== undefined) return known;
  const out = Object.freeze(compute());
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value ?? '');
  memo.set(key, out);
  return out;
}

/**
 * Confines `query` to `namespace` (a DNS label): its comments removed and
 * `namespace="<namespace>"` on every vector and matrix selector; refused (QueryRefused) when it
 * cannot be, and, given `bounds`, refused (QueryTooExpensive) when it costs more than they
 * allow (query-cost.ts). Without `bounds` no cost is checked. Pure; the result confines to the
 * same query again (idempotent). Memoized for the last MEMO_SIZE (query, namespace, bounds)
 * triples: every reconcile of an AITask confines the same query, and parsing it was a tenth
 * of a converge's CPU (npm run bench -- peer, profiled).
 */
export function confineQuery(query: string, namespace: string, bounds?: QueryBounds): Confinement {
  const key = `confine ${bounds ? `${bounds.maxRangeMs}/${bounds.minResolutionMs}` : '-'}\n${namespace}\n${query}`;
  return remembered(key, () => confine(query, namespace, bounds));
}

/**
 * `query` with its comments removed (so Prometheus runs what was checked), or refused as
 * confineQuery refuses it, for an operator that does not confine queries
 * (`--confine-queries=false`): QueryRefused when it is not valid PromQL, QueryTooExpensive
 * when it costs more than `bounds` allow. Pure; memoized with confineQuery's results.
 */
export function boundQuery(query: string, bounds: QueryBounds): Confinement {
  return remembered(`bound ${bounds.maxRangeMs}/${bounds.minResolutionMs}\n${query}`, () =>
    confine(query, undefined, bounds),
  );
}

/** confineQuery, or boundQuery when `namespace` is undefined; not memoized. */
function confine(query: string, namespace: string | undefined, bounds: QueryBounds | undefined): Confinement {
  if (namespace !== undefined && !DNS_LABEL.test(namespace))
    return { ok: false, reason: 'QueryRefused', message: `"${namespace}" is not a namespace name` };
  const refused = (why: string): Confinement => ({
    ok: false,
    reason: 'QueryRefused',
    message:
      namespace === undefined
        ? `trigger.query cannot be run: ${why}`
        : `trigger.query cannot be confined to namespace ${namespace}: ${why}`,
  });
  const bare = withoutComments(query);
  if ('errorAt' in bare) return refused(`not valid PromQL at offset ${bare.errorAt}`);
  const edits: Edit[] = [];
  let refusal: string | undefined;
  const tree = parser.parse(bare.query);
  tree.iterate({
    enter: (ref) => {
      if (refusal !== undefined) return false;
      if (ref.type.isError) refusal = `not valid PromQL without its comments, at offset ${ref.from}`;
      else if (namespace === undefined) return undefined;
      else if (ref.name === 'Info')
        refusal =
          'info() reads target_info series outside the query, which cannot be confined to a namespace';
      else if (ref.name === 'VectorSelector') {
        const confined = confineSelector(ref.node, bare.query, namespace);
        if (typeof confined === 'string') refusal = confined;
        else edits.push(...confined);
      }
      return undefined;
    },
  });
  if (refusal !== undefined) return refused(refusal);
  const tooExpensive = bounds && costRefusal(tree.topNode, bare.query, bounds);
  if (tooExpensive !== undefined)
    return {
      ok: false,
      reason: 'QueryTooExpensive',
      message: `trigger.query costs too much: ${tooExpensive}`,
    };
  return { ok: true, query: applyEdits(bare.query, edits) };
}
