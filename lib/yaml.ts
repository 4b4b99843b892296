// One YAML style for every generated file and every `-o yaml`: js-yaml with stable
// key order as written, no line folding and no anchors, so output is deterministic.

import { dump, load } from 'js-yaml';

/** Serialises `value` as a single YAML document. */
export function toYaml(value: unknown): string {
  return dump(value, { lineWidth: -1, noRefs: true });
}

/** Parses one YAML document; throws js-yaml's error (with line and column) on bad input. */
export function fromYaml(text: string): unknown {
  return load(text);
}
