// The generators cover their schemas: over a fixed-seed sample, every field each version's
// schema declares (spec and status, nested ones and array items included) occurs at least
// once, so a field added to api/schema without a generator fails here; and every generated
// field is one the schema declares.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { objectSchema, type VersionName } from '../../api/crd.ts';
import { v1alpha1Task, v1Task, v2Task } from './arbitraries.ts';
import { schemaPaths, valuePaths, withDefaults } from './schema-walk.ts';

const SEED = 20261201;
const ARBITRARIES: Record<VersionName, fc.Arbitrary<{ spec: unknown; status?: unknown }>> = {
  v1alpha1: v1alpha1Task,
  v1: v1Task,
  v2: v2Task,
};

for (const [version, arb] of Object.entries(ARBITRARIES) as [
  VersionName,
  (typeof ARBITRARIES)[VersionName],
][]) {
  test(`${version}: the generator covers every field of the schema, and only those`, () => {
    const schema = objectSchema(version);
    const declared = schemaPaths(schema).filter((p) => p.startsWith('spec.') || p.startsWith('status.'));
    const seen = new Set(
      fc
        .sample(arb, { seed: SEED, numRuns: 500 })
        .flatMap((o) => valuePaths({ spec: o.spec, status: o.status })),
    );
    const missing = declared.filter((p) => !seen.has(p));
    assert.deepEqual(missing, [], `${version}: fields no generated object has (seed ${SEED})`);
    const undeclared = [...seen].filter((p) => !declared.includes(p) && p !== 'spec' && p !== 'status');
    assert.deepEqual(undeclared, [], `${version}: generated fields the schema does not declare`);
  });
}

test('v2: decision.llm occurs with mode Rules and with no mode, and the decision record carries effect and llm', () => {
  const sample = fc.sample(v2Task, { seed: SEED, numRuns: 500 });
  assert.ok(sample.some((o) => o.spec.decision?.mode === 'Rules' && o.spec.decision.llm !== undefined));
  assert.ok(
    sample.some(
      (o) =>
        o.spec.decision !== undefined &&
        o.spec.decision.mode === undefined &&
        o.spec.decision.llm !== undefined,
    ),
  );
  assert.ok(sample.some((o) => o.status?.lastDecision?.effect !== undefined));
  assert.ok(sample.some((o) => o.status?.pendingDecision?.llm?.promptTokens !== undefined));
});

test('schema-walk: declared and present paths, and the defaults the apiserver applies (v1 intervalSeconds 60)', () => {
  assert.ok(schemaPaths(objectSchema('v2')).includes('status.conditions[].reason'));
  assert.ok(schemaPaths(objectSchema('v2')).includes('status.lastDecision.llm.promptTokens'));
  assert.deepEqual(valuePaths({ a: { b: [{ c: 1 }, { d: 2 }] } }), ['a', 'a.b', 'a.b[].c', 'a.b[].d']);
  const spec = { targetDeployment: 'web', threshold: 0.5, action: 'noop' };
  assert.deepEqual(withDefaults(objectSchema('v1'), { spec }), { spec: { ...spec, intervalSeconds: 60 } });
  assert.deepEqual(withDefaults(objectSchema('v1'), { spec: { ...spec, intervalSeconds: 30 } }), {
    spec: { ...spec, intervalSeconds: 30 },
  });
  assert.deepEqual(
    withDefaults(objectSchema('v1'), { metadata: {} }),
    { metadata: {} },
    'no spec, nothing to default',
  );
});
