// Every CEL rule of every AITask version has its check (rules.ts) and a row here with values
// the apiserver accepts and values it refuses, so a rule added to a schema without both fails.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { objectSchema, VERSIONS } from '../crd.ts';
import type { JSONSchemaProps } from './infer.ts';
import { RULE_CHECKS, ruleBroken, type Rule } from './rules.ts';

/** Rule text → values that satisfy it and values that break it, as the apiserver judges them. */
const ROWS: Record<string, { readonly ok: readonly unknown[]; readonly broken: readonly unknown[] }> = {
  '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas': {
    ok: [
      {},
      { minReplicas: 9 },
      { maxReplicas: 1 },
      { minReplicas: 1, maxReplicas: 1 },
      { minReplicas: 0, maxReplicas: 5 },
    ],
    broken: [
      { minReplicas: 9, maxReplicas: 1 },
      { minReplicas: 2, maxReplicas: 1, step: 1 },
    ],
  },
  "!has(self.mode) || self.mode != 'LLM' || has(self.llm)": {
    ok: [{}, { mode: 'Rules' }, { mode: 'LLM', llm: { endpoint: 'http://x' } }],
    broken: [{ mode: 'LLM' }],
  },
  "has(self.apiVersion) || self.kind == 'Deployment' || self.kind == 'StatefulSet'": {
    ok: [
      { kind: 'Deployment', name: 'web' },
      { kind: 'StatefulSet', name: 'redis' },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      { apiVersion: 'db.example.com/v1', kind: 'Shard', name: 'redis' },
      { apiVersion: 'v1', kind: 'ReplicationController', name: 'old' },
    ],
    broken: [
      { kind: 'Shard', name: 'redis' },
      { kind: 'deployment', name: 'web' },
      { kind: 'ReplicaSet', name: 'web', namespace: 'shop' },
    ],
  },
  "duration(self) >= duration('10s') && duration(self) <= duration('1h')": {
    ok: ['10s', '1m30s', '1h', '60m'],
    broken: ['9s', '0s', '1h1s', '2h', '61m'],
  },
};

/** Every rule declared anywhere in `schema`. */
function rulesOf(schema: JSONSchemaProps): Rule[] {
  const out: Rule[] = [];
  const stack = [schema];
  for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
    out.push(...(s['x-kubernetes-validations'] ?? []));
    stack.push(...Object.values(s.properties ?? {}));
    if (s.items !== undefined) stack.push(s.items);
    if (s.additionalProperties !== undefined) stack.push(s.additionalProperties);
  }
  return out;
}

const declared = VERSIONS.flatMap((v) => rulesOf(objectSchema(v)).map((r) => ({ version: v, ...r })));

test('every rule of every version has its check and its table row', () => {
  assert.ok(
    declared.some((r) => r.version === 'v2'),
    'v2 declares rules',
  );
  for (const r of declared) {
    assert.ok(RULE_CHECKS.has(r.rule), `${r.version}: no check for ${r.rule}`);
    assert.ok(Object.hasOwn(ROWS, r.rule), `${r.version}: no table row for ${r.rule}`);
  }
});

test('each check accepts what the apiserver accepts and refuses what it refuses', async (t) => {
  for (const r of declared) {
    const row = ROWS[r.rule];
    if (row === undefined) continue;
    await t.test(`${r.version}: ${r.message}`, () => {
      for (const v of row.ok) assert.equal(ruleBroken(r, v), false, JSON.stringify(v));
      for (const v of row.broken) assert.equal(ruleBroken(r, v), true, JSON.stringify(v));
    });
  }
});

test('a rule without a check is refused, not let through', () => {
  assert.equal(ruleBroken({ rule: 'self.x == 1', message: 'x must be 1' }, { x: 1 }), true);
});
