// The CEL rules of the AITask schemas (x-kubernetes-validations), as pure TypeScript checks.
// The apiserver evaluates a rule only on a write at the version that declares it, so a value
// that reaches a version some other way (conversion, a stash replayed into it) is not held to
// it there; whoever produces such a value holds it to the rules with these checks
// (api/conversion/bounds.ts, the operator's clamp). One check per rule text: a rule added to
// a schema without its check here fails rules.test.ts, and is refused at run time (ruleBroken).

import { parseDuration } from '../conversion/duration.ts';

/** A rule as a schema declares it: its CEL text and the message the apiserver answers with. */
export interface Rule {
  readonly rule: string;
  readonly message: string;
}

/** An object-valued `self` as the checks read it: absent fields are `undefined` (CEL's !has). */
type Self = Readonly<Record<string, unknown>>;

function has(self: Self, field: string): boolean {
  return Object.hasOwn(self, field) && self[field] !== undefined;
}

function asObject(self: unknown): Self | undefined {
  return typeof self === 'object' && self !== null && !Array.isArray(self) ? (self as Self) : undefined;
}

/**
 * Each rule text of the schemas → whether `self` (the value at the rule's node, already of the
 * node's type) satisfies it. Values of another type than the node's are the type check's
 * concern: a check given one reports it satisfied.
 */
export const RULE_CHECKS: ReadonlyMap<string, (self: unknown) => boolean> = new Map([
  [
    '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
    (self: unknown): boolean => {
      const o = asObject(self);
      if (o === undefined || !has(o, 'minReplicas') || !has(o, 'maxReplicas')) return true;
      const min = o['minReplicas'];
      const max = o['maxReplicas'];
      return typeof min !== 'number' || typeof max !== 'number' || min <= max;
    },
  ],
  [
    "!has(self.mode) || self.mode != 'LLM' || has(self.llm)",
    (self: unknown): boolean => {
      const o = asObject(self);
      return o === undefined || !has(o, 'mode') || o['mode'] !== 'LLM' || has(o, 'llm');
    },
  ],
  [
    "has(self.apiVersion) || self.kind == 'Deployment' || self.kind == 'StatefulSet'",
    (self: unknown): boolean => {
      const o = asObject(self);
      return (
        o === undefined || has(o, 'apiVersion') || o['kind'] === 'Deployment' || o['kind'] === 'StatefulSet'
      );
    },
  ],
  [
    "duration(self) >= duration('10s') && duration(self) <= duration('1h')",
    (self: unknown): boolean => {
      if (typeof self !== 'string') return true;
      const seconds = parseDuration(self);
      return seconds !== undefined && seconds >= 10 && seconds <= 3600;
    },
  ],
]);

/**
 * Whether `self` breaks `rule`: the rule's check says so, or the rule has no check in
 * RULE_CHECKS (refused rather than let through unchecked).
 */
export function ruleBroken(rule: Rule, self: unknown): boolean {
  const check = RULE_CHECKS.get(rule.rule);
  return check === undefined || !check(self);
}
