// Walks the OpenAPI schemas of api/ the way the apiserver reads them, for the tests: the
// paths of every field a schema declares (so a generator can be checked to cover them
// all), the paths a value actually has, and structural defaulting (the `default` of each
// absent property whose parent object is present), which the apiserver applies to a
// request at the version it was made in.

import type { JSONSchemaProps } from '../../api/schema/infer.ts';

/** Every field path `schema` declares, as `a.b` with `[]` for array items (`status.conditions[].reason`). */
export function schemaPaths(schema: JSONSchemaProps, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    out.push(path);
    if (prop.type === 'object') out.push(...schemaPaths(prop, path));
    if (prop.type === 'array' && prop.items?.type === 'object')
      out.push(...schemaPaths(prop.items, `${path}[]`));
  }
  return out;
}

/** Every field path present in `value`, in the notation of schemaPaths. */
export function valuePaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => valuePaths(v, `${prefix}[]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...valuePaths(v, path)];
  });
}

/**
 * `value` with the structural defaults of `schema` applied, as the apiserver does to a
 * request: an absent property with a `default` gets it, in every object present (array
 * items included). Returns a new value; `value` is not changed.
 */
export function withDefaults(schema: JSONSchemaProps, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return value.map((v: unknown) => (items ? withDefaults(items, v) : v));
  }
  if (typeof value !== 'object' || value === null || schema.properties === undefined) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (out[key] === undefined && prop.default !== undefined) out[key] = structuredClone(prop.default);
    else if (out[key] !== undefined) out[key] = withDefaults(prop, out[key]);
  }
  return out;
}
