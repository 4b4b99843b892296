// Cuts a value to the bounds of its OpenAPI schema: every string to its maxLength, every
// list to its maxItems, every map to its maxProperties. The operator passes each status it
// writes through this (api/status/bounded.ts), so its own writes are never refused by the
// CRD's bounds, whatever they quote (a long query, an LLM's text, a value a tenant put in
// status before the bounds existed). Pure: the input is not changed; iterative over the
// schema's depth (the schemas are a few levels deep), linear in the value's size.

import type { JSONSchemaProps } from './infer.ts';

/** What a cut human-readable string ends with, so a reader sees it was cut. */
export const ELLIPSIS = '…';

/**
 * `text` cut to at most `max` Unicode code points (the unit the apiserver's maxLength
 * counts), never splitting a surrogate pair. With `mark`, a cut string ends with ELLIPSIS
 * (within `max`). Returns `text` itself when it fits.
 */
export function truncateCodePoints(text: string, max: number, mark = false): string {
  // UTF-16 units are never fewer than code points: a string this short fits.
  if (text.length <= max) return text;
  const marked = mark && max >= 1;
  const keep = marked ? max - 1 : max;
  let points = 0;
  let offset = 0;
  let cut = 0;
  for (const ch of text) {
    if (points === keep) cut = offset;
    if (points === max) return text.slice(0, cut) + (marked ? ELLIPSIS : '');
    points++;
    offset += ch.length;
  }
  return text;
}

/**
 * `value` within `schema`'s length, item and property bounds. A cut string ends with
 * ELLIPSIS unless its schema has a pattern (an ellipsis could break it); lists keep their
 * first maxItems entries, maps their first maxProperties keys (insertion order). Values the
 * schema does not describe, and values of another type than the schema's, are returned
 * as they are.
 */
export function clampToSchema<T>(schema: JSONSchemaProps, value: T): T {
  return clamp(schema, value) as T;
}

function clamp(schema: JSONSchemaProps, value: unknown): unknown {
  if (typeof value === 'string') {
    if (schema.maxLength === undefined || schema.enum !== undefined) return value;
    return truncateCodePoints(value, schema.maxLength, schema.pattern === undefined);
  }
  if (Array.isArray(value)) {
    const list: readonly unknown[] = value;
    const kept = schema.maxItems !== undefined ? list.slice(0, schema.maxItems) : list;
    const items = schema.items;
    return items === undefined ? [...kept] : kept.map((v) => clamp(items, v));
  }
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const out: Record<string, unknown> = {};
  let extra = 0;
  for (const [key, v] of entries) {
    const prop = schema.properties?.[key];
    if (prop !== undefined) {
      out[key] = clamp(prop, v);
      continue;
    }
    const additional = schema.additionalProperties;
    if (additional === undefined) {
      out[key] = v;
      continue;
    }
    if (schema.maxProperties !== undefined && extra >= schema.maxProperties) continue;
    extra++;
    out[key] = clamp(additional, v);
  }
  return out;
}
