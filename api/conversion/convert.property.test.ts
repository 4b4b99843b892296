// Property tests: for thousands of generated valid objects per version, x → hub → x and
// hub → x → hub are exact identities (spec, status, metadata and unrelated annotations),
// with the stash signed and verified on the way as the webhook does, and no signed stash
// is ever rejected.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { convert } from './convert.ts';
import { v1alpha1Task, v1Task, v2Task } from '../../test/support/arbitraries.ts';
import { TARGET_DEFAULT_API_VERSION, TARGET_KINDS } from '../schema/v2.ts';
import { builtinKind } from '../schema/target.ts';
import { objectSchema } from '../crd.ts';
import { violations } from './bounds.ts';

const runs = { numRuns: 3000 };
const V2 = 'aiops.example.com/v2';
const key = Buffer.alloc(32, 7);
const opts = {
  key,
  onStashRejected: (r: { reason: string; detail: string }) => {
    throw new Error(`a stash conversion signed was rejected: ${r.reason}: ${r.detail}`);
  },
};

test('v1alpha1 → v2 → v1alpha1 is the identity', () => {
  fc.assert(
    fc.property(v1alpha1Task, (o) =>
      assert.deepStrictEqual(convert(convert(o, V2, opts), o.apiVersion, opts), o),
    ),
    runs,
  );
});

test('v1 → v2 → v1 is the identity', () => {
  fc.assert(
    fc.property(v1Task, (o) => assert.deepStrictEqual(convert(convert(o, V2, opts), o.apiVersion, opts), o)),
    runs,
  );
});

test('the v2 tasks generated name every kind of target the schema allows, so each round trip below covers them all', () => {
  const targets = fc.sample(v2Task, { seed: 45, numRuns: 400 }).map((o) => o.spec.target);
  const kinds = new Set(targets.filter((t) => t.apiVersion === undefined).map((t) => t.kind));
  assert.deepStrictEqual([...kinds].sort(), [...TARGET_KINDS].sort(), 'the built-in kinds, no apiVersion');
  assert.ok(
    targets.some((t) => t.apiVersion === TARGET_DEFAULT_API_VERSION),
    'apps/v1 spelled out',
  );
  const custom = targets.filter((t) => t.apiVersion !== undefined && builtinKind(t) === undefined);
  assert.ok(custom.length > 40, `${custom.length} custom kinds`);
  assert.ok(
    custom.some((t) => t.apiVersion !== undefined && /^[a-z0-9.-]+\/v/.test(t.apiVersion)),
    'a custom group/version',
  );
  assert.ok(
    custom.some((t) => t.apiVersion === 'v1'),
    'the core group',
  );
  assert.ok(
    custom.some((t) => t.kind.length === 63),
    'the longest kind',
  );
  assert.ok(
    custom.some((t) => t.apiVersion?.length === 317),
    'the longest apiVersion',
  );
});

test('the v2 tasks generated are valid: within the v2 schema, its CEL rules included', () => {
  const schema = objectSchema('v2');
  fc.assert(
    fc.property(v2Task, (o) =>
      assert.deepStrictEqual(violations(schema, { spec: o.spec, status: o.status }), []),
    ),
    { numRuns: 1000 },
  );
});

for (const spoke of ['aiops.example.com/v1alpha1', 'aiops.example.com/v1']) {
  test(`v2 → ${spoke} → v2 is the identity`, () => {
    fc.assert(
      fc.property(v2Task, (o) => assert.deepStrictEqual(convert(convert(o, spoke, opts), V2, opts), o)),
      runs,
    );
  });
}

test("v2 → v1alpha1 → v1 → v2 is the identity (chained spokes keep each other's data)", () => {
  fc.assert(
    fc.property(v2Task, (o) => {
      const a = convert(o, 'aiops.example.com/v1alpha1', opts);
      const b = convert(a, 'aiops.example.com/v1', opts);
      assert.deepStrictEqual(convert(b, V2, opts), o);
    }),
    { numRuns: 1000 },
  );
});

test('conversion never changes metadata other than annotations', () => {
  fc.assert(
    fc.property(v2Task, fc.constantFrom('aiops.example.com/v1alpha1', 'aiops.example.com/v1'), (o, to) => {
      const out = convert(o, to, opts);
      const strip = (m: typeof o.metadata) => ({ ...m, annotations: undefined });
      assert.deepStrictEqual(strip(out.metadata), strip(o.metadata));
      assert.equal(out.apiVersion, to);
    }),
    { numRuns: 1000 },
  );
});
