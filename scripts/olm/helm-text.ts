// Helm templates written as objects: the chart's templates are the same objects the plain
// install and the CSV are built from, serialised with the project's one YAML style, with
// markers where Helm must put a value or a block. A marker survives js-yaml as an opaque
// token (its payload hex-encoded, so no quoting rule can touch it) and is then replaced by
// the Go template text it carries: `helmExpr` stands for one scalar, `helmLines` for whole
// lines at the marker's indentation (a list item, a map entry, a conditional block).

import { toYaml } from '../../lib/yaml.ts';

const EXPR = /'?@@helm-expr:([0-9a-f]+)@@'?/g;
const LINES = /^( *)(?:- )?.*@@helm-lines:([0-9a-f]+)@@.*$/gm;
const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
const unhex = (s: string): string => Buffer.from(s, 'hex').toString('utf8');

/** A scalar the template computes, e.g. `{{ .Values.replicaCount }}`; written into the YAML as is. */
export function helmExpr(template: string): string {
  return `@@helm-expr:${hex(template)}@@`;
}

/**
 * Lines written in place of the list item or map entry holding this marker (as a list item,
 * or as a map key whose value is ignored), each indented like that item; `%I+n%` in a line
 * becomes that indentation plus n (for `nindent`). Lines carry their own `- ` when they are
 * list items.
 */
export function helmLines(...lines: readonly string[]): string {
  return `@@helm-lines:${hex(lines.join('\n'))}@@`;
}

/** `key: <toYaml of value>` at this place, e.g. `helmBlock('resources', '.Values.resources')`. */
export function helmBlock(key: string, value: string): string {
  return helmLines(`${key}:`, `  {{- toYaml ${value} | nindent %I+2% }}`);
}

/** Like helmBlock, but the whole entry is left out when `value` is empty. */
export function helmOptionalBlock(key: string, value: string): string {
  return helmLines(`{{- with ${value} }}`, `${key}:`, `  {{- toYaml . | nindent %I+2% }}`, '{{- end }}');
}

/**
 * `value` as YAML with every marker replaced by its template text; braces that would open or
 * close a Go template in the value itself (a dashboard's `{{legend}}`) are written so that
 * Helm prints them as they are.
 */
export function templateYaml(value: unknown): string {
  return toYaml(value)
    .replace(/\{\{|\}\}/g, (m) => `{{ "${m}" }}`)
    .replace(LINES, (_line, indent: string, payload: string) =>
      unhex(payload)
        .split('\n')
        .map((l) => (indent + l).replace(/%I\+(\d+)%/g, (_m, n: string) => String(indent.length + Number(n))))
        .join('\n'),
    )
    .replace(EXPR, (_m, payload: string) => unhex(payload));
}
