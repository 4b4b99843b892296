// One seeded unsafe change per rule must be caught; the unchanged CRD and additive
// changes (new optional field, looser range, added enum value) must pass.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCRD, type CustomResourceDefinition } from '../crd.ts';
import type { JSONSchemaProps } from '../schema/infer.ts';
import { checkUpgrade, type Rule } from './safety.ts';

const conversion = { url: 'https://127.0.0.1:9443/convert' };
const base = buildCRD({ conversion });

type Mutable = { -readonly [K in keyof JSONSchemaProps]: JSONSchemaProps[K] } & {
  properties: Record<string, Mutable>;
  required?: string[];
};

function edit(
  version: string,
  f: (spec: Mutable, crd: CustomResourceDefinition) => void,
): CustomResourceDefinition {
  const crd = structuredClone(base);
  const v = crd.spec.versions.find((x) => x.name === version);
  assert.ok(v);
  const root = v.schema.openAPIV3Schema as Mutable;
  f(root.properties['spec'] as Mutable, crd);
  return crd;
}

test('the current CRD upgraded to itself is safe', () => {
  assert.deepEqual(checkUpgrade(base, base, ['v2']), []);
});

test('additive changes are safe', () => {
  const next = edit('v1', (spec) => {
    spec.properties['note'] = { type: 'string' } as Mutable;
    Reflect.deleteProperty(spec.properties['threshold'] as Mutable, 'minimum');
    (spec.properties['action'] as Mutable).enum = [
      ...((spec.properties['action'] as Mutable).enum ?? []),
      'drain',
    ];
  });
  assert.deepEqual(checkUpgrade(base, next, ['v2']), []);
});

test('each unsafe change is caught with its rule and path', async (t) => {
  const cases: [string, CustomResourceDefinition, string[], Rule, string][] = [
    [
      'stops serving a stored version',
      edit('v1', (_s, crd) => {
        const v = crd.spec.versions.find((x) => x.name === 'v1alpha1');
        if (v) v.served = false;
      }),
      ['v1alpha1', 'v2'],
      'storedVersionRemoved',
      '',
    ],
    [
      'removes a served, never-deprecated version',
      edit('v1', (_s, crd) => {
        crd.spec.versions = crd.spec.versions.filter((x) => x.name !== 'v1');
      }),
      ['v2'],
      'servedVersionRemoved',
      '',
    ],
    [
      'storage version not served',
      edit('v2', (_s, crd) => {
        const v = crd.spec.versions.find((x) => x.name === 'v2');
        if (v) v.served = false;
      }),
      ['v2'],
      'storageNotServed',
      '',
    ],
    [
      'new required field',
      edit('v1', (spec) => {
        spec.required = [...(spec.required ?? []), 'intervalSeconds'];
      }),
      ['v2'],
      'newRequired',
      '.spec.intervalSeconds',
    ],
    [
      'enum lost a value',
      edit('v1', (spec) => {
        (spec.properties['action'] as Mutable).enum = ['noop'];
      }),
      ['v2'],
      'enumTightened',
      '.spec.action',
    ],
    [
      'minimum raised',
      edit('v1', (spec) => {
        (spec.properties['intervalSeconds'] as Mutable).minimum = 30;
      }),
      ['v2'],
      'rangeTightened',
      '.spec.intervalSeconds',
    ],
    [
      'maximum lowered',
      edit('v1alpha1', (spec) => {
        (spec.properties['threshold'] as Mutable).maximum = 90;
      }),
      ['v2'],
      'rangeTightened',
      '.spec.threshold',
    ],
    [
      'pattern changed',
      edit('v1alpha1', (spec) => {
        (spec.properties['interval'] as Mutable).pattern = '^[0-9]+s$';
      }),
      ['v2'],
      'patternChanged',
      '.spec.interval',
    ],
    [
      'type changed',
      edit('v1', (spec) => {
        (spec.properties['threshold'] as Mutable).type = 'integer';
      }),
      ['v2'],
      'typeChanged',
      '.spec.threshold',
    ],
    [
      'default changed',
      edit('v1', (spec) => {
        (spec.properties['intervalSeconds'] as Mutable).default = 30;
      }),
      ['v2'],
      'defaultChanged',
      '.spec.intervalSeconds',
    ],
    [
      'field removed',
      edit('v2', (spec) => {
        Reflect.deleteProperty(spec.properties, 'dryRun');
      }),
      ['v2'],
      'fieldRemoved',
      '.spec.dryRun',
    ],
    [
      'CEL rule added',
      edit('v1', (spec) => {
        spec['x-kubernetes-validations'] = [{ rule: 'self.threshold < 5', message: 'x' }];
      }),
      ['v2'],
      'celAdded',
      '.spec',
    ],
  ];
  for (const [name, next, stored, rule, path] of cases) {
    await t.test(name, () => {
      const findings = checkUpgrade(base, next, stored);
      assert.ok(
        findings.some((f) => f.rule === rule && f.path === path),
        `expected ${rule} at "${path}", got ${JSON.stringify(findings)}`,
      );
    });
  }
});
