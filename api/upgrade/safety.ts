// CRD upgrade-safety rules, as a pure comparison of two CRDs: what OLM's CRD upgrade
// check refuses and what would lose data or break existing clients. Each finding names
// the rule, the version and the schema path, so `npm run check-upgrade` can say exactly
// what to fix.

import type { CustomResourceDefinition, CRDVersion } from '../crd.ts';
import type { JSONSchemaProps } from '../schema/infer.ts';

/** The rules, in the words `check-upgrade` prints. */
export const RULES = {
  storedVersionRemoved: 'a version that may be in status.storedVersions is no longer served',
  servedVersionRemoved: 'a served version disappeared without a deprecation release',
  storageNotServed: 'the storage version must be served',
  newRequired: 'a field became required on a served version',
  enumTightened: 'an enum lost values on a served version',
  rangeTightened: 'a numeric range or length limit got tighter on a served version',
  patternChanged: 'a pattern changed on a served version',
  typeChanged: 'a field changed type on a served version',
  defaultChanged: 'a default changed on a served version',
  fieldRemoved: 'a field was removed from a served version (existing data would be pruned)',
  celAdded: 'a new validation rule was added on a served version',
} as const;
export type Rule = keyof typeof RULES;

export interface Finding {
  rule: Rule;
  version: string;
  /** JSON path inside the version's schema, e.g. `.spec.threshold`. */
  path: string;
  detail: string;
}

/**
 * Compares `from` (installed) with `to` (the upgrade). `storedVersions` are the versions
 * objects may still be stored at (the CRD's status.storedVersions, or for a release
 * sequence every storage version since the last completed migration). Returns every
 * finding; an empty list means the upgrade is safe.
 */
export function checkUpgrade(
  from: CustomResourceDefinition,
  to: CustomResourceDefinition,
  storedVersions: readonly string[],
): Finding[] {
  const findings: Finding[] = [];
  const served = (crd: CustomResourceDefinition) =>
    new Map<string, CRDVersion>(crd.spec.versions.filter((v) => v.served).map((v) => [v.name, v]));
  const before = served(from);
  const after = served(to);
  const storage = to.spec.versions.find((v) => v.storage);
  if (!storage?.served)
    findings.push({
      rule: 'storageNotServed',
      version: storage?.name ?? '(none)',
      path: '',
      detail: 'no served storage version',
    });
  for (const name of storedVersions) {
    if (!after.has(name)) {
      findings.push({
        rule: 'storedVersionRemoved',
        version: name,
        path: '',
        detail: `run \`kubectl aiops migrate-storage\` first so storedVersions no longer lists ${name}`,
      });
    }
  }
  for (const [name, old] of before) {
    const next = after.get(name);
    if (next === undefined) {
      if (!storedVersions.includes(name) && !old.deprecated) {
        findings.push({
          rule: 'servedVersionRemoved',
          version: name,
          path: '',
          detail: `mark ${name} deprecated in an earlier release before removing it`,
        });
      }
      continue;
    }
    compareSchemas(name, old, next, findings);
  }
  return findings;
}

function compareSchemas(version: string, from: CRDVersion, to: CRDVersion, out: Finding[]): void {
  walk(from.schema.openAPIV3Schema, to.schema.openAPIV3Schema, '', (rule, path, detail) =>
    out.push({ rule, version, path, detail }),
  );
}

type Report = (rule: Rule, path: string, detail: string) => void;

function walk(a: JSONSchemaProps, b: JSONSchemaProps, path: string, report: Report): void {
  if (a.type !== b.type) {
    report('typeChanged', path, `${a.type ?? 'any'} → ${b.type ?? 'any'}`);
    return;
  }
  if (JSON.stringify(a.default) !== JSON.stringify(b.default)) {
    report(
      'defaultChanged',
      path,
      `${a.default === undefined ? 'none' : JSON.stringify(a.default)} → ${b.default === undefined ? 'none' : JSON.stringify(b.default)}`,
    );
  }
  if (b.enum) {
    const lost = (a.enum ?? []).filter((v) => !b.enum?.includes(v));
    if (!a.enum) report('enumTightened', path, `new enum ${JSON.stringify(b.enum)}`);
    else if (lost.length > 0) report('enumTightened', path, `removed ${JSON.stringify(lost)}`);
  }
  const tighter = (key: 'minimum' | 'minLength', bKey = b[key], aKey = a[key]) =>
    bKey !== undefined && (aKey === undefined || bKey > aKey)
      ? `${key} ${aKey ?? 'none'} → ${bKey}`
      : undefined;
  const lower = (
    key: 'maximum' | 'maxLength' | 'maxItems' | 'maxProperties',
    bKey = b[key],
    aKey = a[key],
  ) =>
    bKey !== undefined && (aKey === undefined || bKey < aKey)
      ? `${key} ${aKey ?? 'none'} → ${bKey}`
      : undefined;
  for (const d of [
    tighter('minimum'),
    tighter('minLength'),
    lower('maximum'),
    lower('maxLength'),
    lower('maxItems'),
    lower('maxProperties'),
  ]) {
    if (d !== undefined) report('rangeTightened', path, d);
  }
  if (a.pattern !== b.pattern && b.pattern !== undefined)
    report('patternChanged', path, `${a.pattern ?? 'none'} → ${b.pattern}`);
  const rules = new Set((a['x-kubernetes-validations'] ?? []).map((r) => r.rule));
  for (const r of b['x-kubernetes-validations'] ?? [])
    if (!rules.has(r.rule)) report('celAdded', path, r.rule);
  const wasRequired = new Set(a.required ?? []);
  for (const r of b.required ?? [])
    if (!wasRequired.has(r)) report('newRequired', `${path}.${r}`, 'required now');
  for (const [key, sub] of Object.entries(a.properties ?? {})) {
    const next = b.properties?.[key];
    if (next === undefined) {
      if (!b['x-kubernetes-preserve-unknown-fields'])
        report('fieldRemoved', `${path}.${key}`, 'no longer in the schema');
    } else walk(sub, next, `${path}.${key}`, report);
  }
  if (a.items && b.items) walk(a.items, b.items, `${path}[]`, report);
  if (a.additionalProperties && b.additionalProperties)
    walk(a.additionalProperties, b.additionalProperties, `${path}{}`, report);
}
