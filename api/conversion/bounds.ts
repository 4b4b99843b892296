// The bounds of a version's OpenAPI schema, checked on a value without the apiserver. The
// apiserver validates a custom resource only at the version it was written in, so a value
// conversion puts into another version (from the stash, which anyone can write) reaches
// storage or a client unchecked at that version. This check is what conversion holds each
// stash entry and each object it produces to: type, enum, minimum/maximum,
// minLength/maxLength/pattern, maxItems, maxProperties, required properties, no undeclared
// properties, and the CEL rules (x-kubernetes-validations, checked by api/schema/rules.ts).
// Formats are not evaluated. Pure; iterative, so any depth is safe. Its work is bounded by
// the schema, whatever the value: a list longer than its maxItems (a map with more than its
// maxProperties) is reported without walking its items, the walk follows only what the
// schema declares, and it stops after `maxViolations` violations.

import type { JSONSchemaProps } from '../schema/infer.ts';
import { ruleBroken } from '../schema/rules.ts';

/** Default most violations one check reports: 64; a check that finds more ends with MORE_VIOLATIONS. */
export const VIOLATIONS_MAX = 64;

/** The `why` of the last violation of a check that stopped at its cap. */
export const MORE_VIOLATIONS = 'and more violations, not listed';

/** One place a value breaks its schema: the JSON path (`spec.intervalSeconds`) and why. */
export interface Violation {
  readonly path: string;
  readonly why: string;
  /**
   * The optional property (keys from the value checked) whose removal clears the violation:
   * the property itself, or the list it is in. Absent when that property is required.
   */
  readonly remove?: readonly string[];
}

interface Item {
  readonly schema: JSONSchemaProps;
  readonly value: unknown;
  readonly path: string;
  /** The property of the value checked that holds this item, and whether its parent requires it. */
  readonly prop: readonly string[];
  readonly required: boolean;
  readonly inList: boolean;
}

const patterns = new Map<string, RegExp>();

function patternOf(source: string): RegExp {
  let re = patterns.get(source);
  if (re === undefined) {
    re = new RegExp(source, 'u');
    patterns.set(source, re);
  }
  return re;
}

function typeError(schema: JSONSchemaProps, value: unknown): string | undefined {
  switch (schema.type) {
    case undefined:
      return undefined;
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? undefined
        : 'not an object';
    case 'array':
      return Array.isArray(value) ? undefined : 'not an array';
    case 'string':
      return typeof value === 'string' ? undefined : 'not a string';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'not a boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'not a number';
    case 'integer':
      return Number.isSafeInteger(value) ? undefined : 'not an integer';
    default:
      return undefined;
  }
}

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function scalarError(schema: JSONSchemaProps, value: unknown): string | undefined {
  if (schema.enum !== undefined && !schema.enum.includes(value as string | number))
    return `not one of ${schema.enum.join(', ')}`;
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `below ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `above ${schema.maximum}`;
  }
  if (typeof value === 'string') {
    // Lengths count code points, as the apiserver does; value.length (UTF-16 units) is at
    // least that and at most twice that, so most strings need no count.
    const { minLength: min, maxLength: max } = schema;
    const counted =
      (min !== undefined && value.length < 2 * min) || (max !== undefined && value.length > max);
    const length = counted ? codePoints(value) : value.length;
    if (min !== undefined && length < min) return `shorter than ${min}`;
    if (max !== undefined && length > max) return `longer than ${max}`;
    if (schema.pattern !== undefined && !patternOf(schema.pattern).test(value))
      return `does not match ${schema.pattern}`;
  }
  return undefined;
}

/**
 * The violations of `schema` in `value`, in walk order; empty when `value` is within bounds.
 * `path` prefixes the reported paths (default: none). `null` passes only where the schema
 * says `nullable`. At most `maxViolations` (default VIOLATIONS_MAX, 64) are listed: a check
 * that finds more ends with one more, whose `why` is MORE_VIOLATIONS (and has no `remove`).
 * The items of a list over its maxItems, and the entries of a map over its maxProperties,
 * are not checked (the list or map is reported whole).
 */
export function violations(
  schema: JSONSchemaProps,
  value: unknown,
  path = '',
  maxViolations = VIOLATIONS_MAX,
): Violation[] {
  const out: Violation[] = [];
  const report = (at: Item, p: string, why: string, prop = at.prop, required = at.required): void => {
    out.push(required ? { path: p, why } : { path: p, why, remove: prop });
  };
  const stack: Item[] = [{ schema, value, path, prop: [], required: true, inList: false }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (out.length > maxViolations) break;
    const { schema: s, value: v, path: p } = next;
    if (v === null && s.nullable === true) continue;
    const why = typeError(s, v) ?? scalarError(s, v);
    if (why !== undefined) {
      report(next, p, why);
      continue;
    }
    for (const rule of s['x-kubernetes-validations'] ?? [])
      if (ruleBroken(rule, v)) report(next, p, rule.message);
    if (Array.isArray(v)) {
      if (s.maxItems !== undefined && v.length > s.maxItems) {
        report(next, p, `more than ${s.maxItems} items`);
        continue;
      }
      const items = s.items;
      if (items !== undefined)
        for (let i = 0; i < v.length; i++)
          stack.push({ ...next, schema: items, value: v[i], path: `${p}[${i}]`, inList: true });
    } else if (typeof v === 'object' && v !== null && s.type === 'object') {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).filter((k) => o[k] !== undefined);
      if (s.maxProperties !== undefined && keys.length > s.maxProperties) {
        report(next, p, `more than ${s.maxProperties} properties`);
        continue;
      }
      const required = s.required ?? [];
      for (const k of required)
        if (!keys.includes(k)) out.push({ path: p === '' ? k : `${p}.${k}`, why: 'required' });
      const closed =
        (s.properties !== undefined || s.additionalProperties !== undefined) &&
        s['x-kubernetes-preserve-unknown-fields'] !== true;
      for (const k of keys) {
        const child =
          s.properties !== undefined && Object.hasOwn(s.properties, k)
            ? s.properties[k]
            : s.additionalProperties;
        const childPath = p === '' ? k : `${p}.${k}`;
        const prop = next.inList ? next.prop : [...next.prop, k];
        const isRequired = next.inList ? next.required : required.includes(k);
        if (child !== undefined)
          stack.push({
            schema: child,
            value: o[k],
            path: childPath,
            prop,
            required: isRequired,
            inList: next.inList,
          });
        else if (closed) report(next, childPath, 'not declared', prop, isRequired);
      }
    }
  }
  if (out.length > maxViolations) {
    out.length = maxViolations;
    out.push({ path, why: MORE_VIOLATIONS });
  }
  return out;
}

/**
 * The most values (objects, lists and scalars, each counted once) a value within `schema`
 * can hold, from its maxItems and maxProperties; Infinity where the schema leaves a part
 * unbounded (no maxItems, or an object without declared properties). Pure.
 */
export function maxValues(schema: JSONSchemaProps): number {
  if (schema.type === 'array') {
    if (schema.maxItems === undefined || schema.items === undefined) return Infinity;
    return 1 + schema.maxItems * maxValues(schema.items);
  }
  if (schema.type !== 'object') return 1;
  if (schema.properties === undefined && schema.additionalProperties === undefined) return Infinity;
  let n = 1;
  for (const p of Object.values(schema.properties ?? {})) n += maxValues(p);
  const extra = schema.additionalProperties;
  if (extra !== undefined)
    n += schema.maxProperties === undefined ? Infinity : schema.maxProperties * maxValues(extra);
  return n;
}

/**
 * Why `value` is over a budget of `maxCount` values (objects, lists and scalars, each counted
 * once) or `maxDepth` levels of nesting (a scalar at the top is depth 1), or undefined when it
 * is within both. Stops at the first value over either, so its work is at most `maxCount`
 * steps however large the value (a list's items are visited one at a time, never copied).
 * Pure; iterative.
 */
export function overBudget(value: unknown, maxCount: number, maxDepth: number): string | undefined {
  let count = 0;
  const stack: { readonly items: readonly unknown[]; next: number }[] = [{ items: [value], next: 0 }];
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    if (top.next >= top.items.length) {
      stack.pop();
      continue;
    }
    const v = top.items[top.next++];
    if (++count > maxCount) return `holds more than ${maxCount} values`;
    if (typeof v !== 'object' || v === null) continue;
    if (stack.length >= maxDepth) return `is nested deeper than ${maxDepth} levels`;
    stack.push({ items: Array.isArray(v) ? v : Object.values(v), next: 0 });
  }
  return undefined;
}
