// Every field of the AITask CRD is bounded: the generated CRD files, every
// version, spec and status, walked recursively (api/schema/unbounded.ts says what counts).
// A field added without a bound fails here; the walker is itself shown to find an
// unbounded field added anywhere in the real schemas. And what the operator writes is cut
// to those bounds (api/schema/clamp.ts, api/status/bounded.ts), checked against the
// independent bounds check conversion uses (api/conversion/bounds.ts).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { violations } from './conversion/bounds.ts';
import { buildCRD, VERSIONS, type CustomResourceDefinition } from './crd.ts';
import { clampToSchema, ELLIPSIS, truncateCodePoints } from './schema/clamp.ts';
import { CONDITIONS_MAX_ITEMS, MESSAGE_MAX_LENGTH } from './schema/common.ts';
import type { JSONSchemaProps } from './schema/infer.ts';
import { unboundedNodes } from './schema/unbounded.ts';
import * as v2 from './schema/v2.ts';
import { boundStatus } from './status/bounded.ts';
import { CRD_RELEASES, crdOfRelease } from './upgrade/crd-releases.ts';
import { fromYaml } from '../lib/yaml.ts';

const ROOT = new URL('../', import.meta.url);

/** The generated files that carry the CRD (`npm run generate`). */
const GENERATED = [
  'config/crd/aitasks.aiops.example.com.yaml',
  'bundle/manifests/aitasks.aiops.example.com.customresourcedefinition.yaml',
  'deploy/helm/aiops-operator/crds/aitasks.aiops.example.com.yaml',
  'deploy/aiops-operator.yaml',
];

function crdsIn(rel: string): CustomResourceDefinition[] {
  const text = readFileSync(new URL(rel, ROOT), 'utf8');
  return text
    .split(/^---\s*$/m)
    .filter((doc) => doc.replace(/^#.*$/gm, '').trim() !== '')
    .map((doc) => fromYaml(doc) as { kind?: unknown } | null)
    .filter((d): d is CustomResourceDefinition => d?.kind === 'CustomResourceDefinition');
}

function assertBounded(label: string, crd: CustomResourceDefinition): void {
  assert.deepEqual(
    crd.spec.versions.map((v) => v.name),
    [...VERSIONS],
    `${label} lists every version`,
  );
  for (const v of crd.spec.versions) {
    const schema = v.schema.openAPIV3Schema;
    assert.ok(
      schema.properties?.['spec'] && schema.properties['status'],
      `${label} ${v.name}: spec and status`,
    );
    const found = unboundedNodes(schema).map((u) => `${u.path} (no ${u.missing})`);
    assert.deepEqual(found, [], `${label} ${v.name} has unbounded fields:\n${found.join('\n')}`);
  }
}

for (const rel of GENERATED) {
  test(`${rel}: every string, list and map of every version is bounded`, () => {
    const crds = crdsIn(rel);
    assert.equal(crds.length, 1, `${rel} holds the CRD`);
    for (const crd of crds) assertBounded(rel, crd);
  });
}

test('the CRD api/crd.ts builds, and every release declared for upgrades, is bounded', () => {
  assertBounded('buildCRD()', buildCRD({ conversion: { url: 'https://127.0.0.1/convert' } }));
  for (const r of CRD_RELEASES)
    for (const v of crdOfRelease(r, { url: 'https://127.0.0.1/convert' }).spec.versions) {
      assert.deepEqual(unboundedNodes(v.schema.openAPIV3Schema), [], `release ${r.version} ${v.name}`);
    }
});

test('the walker flags each kind of unbounded node, at any depth, and accepts bounded ones', () => {
  const cases: [JSONSchemaProps, string[]][] = [
    [{ type: 'string' }, ['. (no maxLength)']],
    [{ type: 'string', format: 'date-time' }, ['. (no maxLength)']],
    [{ type: 'string', pattern: '^a+$' }, ['. (no maxLength)']],
    [{ type: 'string', maxLength: 3 }, []],
    [{ type: 'string', enum: ['A', 'B'] }, []],
    [{ type: 'array', items: { type: 'integer' } }, ['. (no maxItems)']],
    [{ type: 'array', maxItems: 2 }, ['. (no items)']],
    [{ type: 'array', maxItems: 2, items: { type: 'string' } }, ['[] (no maxLength)']],
    [{ type: 'object', additionalProperties: { type: 'string', maxLength: 1 } }, ['. (no maxProperties)']],
    [{ type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } }, ['{} (no maxLength)']],
    [{ type: 'object' }, ['. (no properties)']],
    [
      {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: { a: { type: 'boolean' } },
      },
      ['. (no x-kubernetes-preserve-unknown-fields)'],
    ],
    [{}, ['. (no type)']],
    [
      {
        type: 'object',
        properties: {
          metadata: { type: 'object' },
          status: {
            type: 'object',
            properties: { list: { type: 'array', maxItems: 1, items: { type: 'object' } } },
          },
        },
      },
      ['.status.list[] (no properties)'],
    ],
  ];
  for (const [schema, want] of cases)
    assert.deepEqual(
      unboundedNodes(schema).map((u) => `${u.path} (no ${u.missing})`),
      want,
      JSON.stringify(schema),
    );
  assert.deepEqual(
    unboundedNodes({ type: 'object', properties: { metadata: { type: 'object' } } }, false).map(
      (u) => u.path,
    ),
    ['.metadata'],
    'metadata is exempt only at the root',
  );
});

/** Every object node of `schema` with declared properties, with its path. */
function objectNodes(schema: JSONSchemaProps, path = ''): { path: string; schema: JSONSchemaProps }[] {
  const here = schema.type === 'object' && schema.properties ? [{ path, schema }] : [];
  const below = [
    ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) => objectNodes(s, `${path}.${k}`)),
    ...(schema.items ? objectNodes(schema.items, `${path}[]`) : []),
  ];
  return [...here, ...below];
}

/** `schema` with `field` added at the object node at `at`. */
function withField(schema: JSONSchemaProps, at: string, field: JSONSchemaProps, path = ''): JSONSchemaProps {
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([k, s]) => [k, withField(s, at, field, `${path}.${k}`)]),
  );
  return {
    ...schema,
    ...(schema.properties ? { properties: path === at ? { ...properties, added: field } : properties } : {}),
    ...(schema.items ? { items: withField(schema.items, at, field, `${path}[]`) } : {}),
  };
}

test('a field added without a bound anywhere in any version is found', () => {
  const crd = buildCRD({ conversion: { url: 'https://127.0.0.1/convert' } });
  const unbounded: JSONSchemaProps[] = [
    { type: 'string' },
    { type: 'array', items: { type: 'string', maxLength: 1 } },
    { type: 'object', additionalProperties: { type: 'integer' } },
  ];
  let tried = 0;
  for (const v of crd.spec.versions) {
    const schema = v.schema.openAPIV3Schema;
    for (const node of objectNodes(schema).filter((n) => n.path !== '' && n.path !== '.metadata'))
      for (const field of unbounded) {
        const found = unboundedNodes(withField(schema, node.path, field)).map((u) => u.path);
        assert.deepEqual(found, [`${node.path}.added`], `${v.name} ${node.path}`);
        tried++;
      }
  }
  assert.ok(tried > 30, `tried ${tried} places`);
});

/** `schema` without `bound` on the node at `path` (property names from the root). */
function withoutBound(schema: JSONSchemaProps, path: readonly string[], bound: 'maxLength'): JSONSchemaProps {
  const [head, ...rest] = path;
  if (head === undefined) return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== bound));
  const child = schema.properties?.[head];
  assert.ok(child, `no property ${head}`);
  return { ...schema, properties: { ...schema.properties, [head]: withoutBound(child, rest, bound) } };
}

test("v2 spec.target's apiVersion and kind are walked and bounded in every generated file, unlike the root's", () => {
  const want = { apiVersion: 317, kind: 63 };
  for (const rel of GENERATED)
    for (const crd of crdsIn(rel)) {
      const v2Schema: JSONSchemaProps | undefined = crd.spec.versions.find((v) => v.name === 'v2')?.schema
        .openAPIV3Schema;
      assert.ok(v2Schema, `${rel}: v2`);
      for (const [field, maxLength] of Object.entries(want)) {
        const path = ['spec', 'target', field];
        const node: JSONSchemaProps | undefined =
          v2Schema.properties?.['spec']?.properties?.['target']?.properties?.[field];
        assert.equal(node?.maxLength, maxLength, `${rel}: .spec.target.${field} maxLength`);
        assert.deepEqual(
          unboundedNodes(withoutBound(v2Schema, path, 'maxLength')).map((u) => `${u.path} (no ${u.missing})`),
          [`.spec.target.${field} (no maxLength)`],
          `${rel}: the walker reaches .spec.target.${field} (the root exemption is the root's alone)`,
        );
      }
    }
});

test('truncateCodePoints cuts to code points without splitting a pair, marking the cut when asked', () => {
  assert.equal(truncateCodePoints('abcdef', 3), 'abc');
  assert.equal(truncateCodePoints('abcdef', 3, true), `ab${ELLIPSIS}`);
  assert.equal(truncateCodePoints('abc', 3, true), 'abc');
  assert.equal(truncateCodePoints('😀😀😀', 3), '😀😀😀', 'six UTF-16 units, three code points: fits');
  assert.equal(truncateCodePoints('😀😀😀😀', 3), '😀😀😀');
  assert.equal(truncateCodePoints('😀😀😀😀', 3, true), `😀😀${ELLIPSIS}`);
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.nat(30), fc.boolean(), (s, max, mark) => {
      const cut = truncateCodePoints(s, max, mark);
      const points = Array.from(cut).length;
      assert.ok(points <= max, `${points} > ${max}`);
      assert.ok(cut.isWellFormed(), 'no lone surrogate');
      if (Array.from(s).length <= max) assert.equal(cut, s);
      else if (!mark) assert.ok(s.startsWith(cut));
    }),
  );
});

/** A v2 status with every field, its strings `n` characters long (enums and patterns kept valid). */
function bigStatus(n: number, conditions: number, nodes: number): v2.Status {
  const text = 'x'.repeat(n);
  const record: v2.DecisionRecord = {
    id: text,
    action: 'CordonNode',
    source: 'llm',
    reason: text,
    blockedBy: text,
    at: `2026-01-01T00:00:00.${'0'.repeat(n)}Z`,
    target: { namespace: text, name: text, uid: text },
    llm: { model: text, latencyMs: 1 },
    effect: { pod: text, podUID: text, node: text },
  };
  return {
    phase: 'Healing',
    message: text,
    lastDecision: record,
    pendingDecision: record,
    lastExecutionTime: `2026-01-01T00:00:00.${'0'.repeat(n)}Z`,
    breachSince: `2026-01-01T00:00:00.${'0'.repeat(n)}Z`,
    cordonedNodes: Array.from({ length: nodes }, (_, i) => `${i}${text}`),
    conditions: Array.from({ length: conditions }, (_, i) => ({
      type: i === conditions - 1 ? 'Ready' : `Custom${i}${text}`,
      status: 'True' as const,
      reason: `R${text}`,
      message: text,
      lastTransitionTime: `2026-01-01T00:00:00.${'0'.repeat(n)}Z`,
    })),
  };
}

test('boundStatus fits any status the operator could write within the v2 schema, its own conditions first', () => {
  const over = boundStatus(bigStatus(MESSAGE_MAX_LENGTH + 10, CONDITIONS_MAX_ITEMS + 3, 5001));
  assert.deepEqual(
    violations(v2.statusSchema, over).filter((x) => !x.why.startsWith('does not match')),
    [],
  );
  assert.ok(
    over.conditions?.some((c) => c.type === 'Ready'),
    "the operator's Ready is kept over the cap",
  );
  assert.equal(over.message?.endsWith(ELLIPSIS), true, 'a cut message says it was cut');
  const small = bigStatus(10, 3, 2);
  assert.deepEqual(boundStatus(small), small, 'a status within bounds is written as it is');
  fc.assert(
    fc.property(fc.nat(400), fc.nat(40), fc.nat(20), (n, conditions, nodes) => {
      const bounded = boundStatus(bigStatus(n, conditions, nodes));
      const lengthOrCount = violations(v2.statusSchema, bounded).filter((x) => /^(longer|more)/.test(x.why));
      assert.deepEqual(lengthOrCount, []);
    }),
    { numRuns: 50 },
  );
});

test('clampToSchema leaves what the schema does not bound, and cuts maps to maxProperties', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      tags: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string', maxLength: 2 } },
    },
  };
  assert.deepEqual(clampToSchema(schema, { tags: { a: 'xyz', b: 'q', c: 'r' }, other: 'long text' }), {
    tags: { a: `x${ELLIPSIS}`, b: 'q' },
    other: 'long text',
  });
});
