// Finds the places of a CRD schema where a writer picks the size: a string without
// maxLength, a list without maxItems, a map without maxProperties, an object open to any
// field. api/crd-bounds.test.ts runs it over the generated CRD, every version, so a field
// added without a bound fails the build before the apiserver would accept a megabyte in it.
//
// What counts as bounded (decided here, once):
// - a string: `maxLength`, or `enum` (a finite set of values). Neither `pattern` nor
//   `format` counts: `date-time` accepts any number of fraction digits, `uri` any length,
//   and the apiserver's CEL cost estimate reads maxLength, not patterns. Every string with
//   a pattern here has a maxLength beside it.
// - a list: `maxItems`, and its items bounded.
// - a map (`additionalProperties`): `maxProperties`, and its values bounded.
// - an object: only declared properties (no x-kubernetes-preserve-unknown-fields, no
//   property-less `type: object`), each bounded.
// - integer, number, boolean: fixed size.
// The object's own apiVersion, kind and metadata are exempt: the apiserver sets and checks
// them itself (apiVersion and kind must name this CRD, metadata is ObjectMeta, validated
// with its own limits), and a CRD may not constrain metadata beyond name and generateName.

import type { JSONSchemaProps } from './infer.ts';

/** The root properties the apiserver bounds itself. */
export const APISERVER_BOUNDED_ROOT = ['apiVersion', 'kind', 'metadata'] as const;

/** One unbounded place: its JSON path (`.status.message`, `.status.cordonedNodes[]`) and what is missing. */
export interface Unbounded {
  readonly path: string;
  readonly missing: string;
}

/**
 * Every unbounded node of `schema` (an object's openAPIV3Schema), depth first. `root` true
 * (the default) exempts APISERVER_BOUNDED_ROOT. An empty result means bounded throughout.
 */
export function unboundedNodes(schema: JSONSchemaProps, root = true): Unbounded[] {
  const out: Unbounded[] = [];
  const stack: { schema: JSONSchemaProps; path: string; top: boolean }[] = [{ schema, path: '', top: root }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { schema: s, path, top } = item;
    const miss = (missing: string): void => void out.push({ path: path || '.', missing });
    if (s['x-kubernetes-preserve-unknown-fields'] === true) miss('x-kubernetes-preserve-unknown-fields');
    switch (s.type) {
      case 'integer':
      case 'number':
      case 'boolean':
        break;
      case 'string':
        if (s.maxLength === undefined && s.enum === undefined) miss('maxLength');
        break;
      case 'array':
        if (s.maxItems === undefined) miss('maxItems');
        if (s.items === undefined) miss('items');
        else stack.push({ schema: s.items, path: `${path}[]`, top: false });
        break;
      case 'object': {
        const props = Object.entries(s.properties ?? {});
        const additional = s.additionalProperties;
        if (additional !== undefined) {
          if (s.maxProperties === undefined) miss('maxProperties');
          stack.push({ schema: additional, path: `${path}{}`, top: false });
        } else if (props.length === 0) miss('properties');
        for (const [key, sub] of props.reverse()) {
          if (top && (APISERVER_BOUNDED_ROOT as readonly string[]).includes(key)) continue;
          stack.push({ schema: sub, path: `${path}.${key}`, top: false });
        }
        break;
      }
      case undefined:
        miss('type');
        break;
    }
  }
  return out;
}
