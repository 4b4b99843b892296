// Property tests of the conversion stash as a hostile tenant writes it: generated valid
// AITasks at every version carry generated stashes (prototype segments, deep and foreign
// paths, huge and deep values, text that is not JSON) that are unsigned, forged, signed
// for another uid, or signed with the right key and uid (so only the bounds stop them).
// Conversion to every other version must never throw, never add a key to
// Object.prototype, always give a body within the target version's schema bounds, and,
// unless the MAC vouches for the stash, give exactly what it gives without one.
// fast-check prints the seed and path of a failure; the seeds below are fixed. And a table:
// the entries under one field are checked together, so a rule over two of its properties
// (a target's kind needs its apiVersion) lets a valid pair in and keeps an invalid one out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { convert, type LooseAITask } from './convert.ts';
import { violations } from './bounds.ts';
import { applyStash, signStash, STASH_LIMITS } from './stash.ts';
import type { DiffEntry } from './json-diff.ts';
import { objectSchema, VERSIONS, type VersionName } from '../crd.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../install.ts';
import { v1alpha1Task, v1Task, v2Task } from '../../test/support/arbitraries.ts';

const KEY = Buffer.alloc(32, 42);
const SEED = 2_101_021;
const G = 'aiops.example.com';

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'spec',
      'status',
      'intervalSeconds',
      'paused',
      'trigger',
      'threshold',
      'remediation',
      'scale',
      'maxReplicas',
      'action',
      'target',
      'name',
      'kind',
      'apiVersion',
      'phase',
      'conditions',
      'interval',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const root = fc.constantFrom('spec', 'status', '__proto__', 'constructor', 'metadata');
const path = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(root, fc.array(segment, { maxLength: 4 })).map(([r, rest]) => [r, ...rest]),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 17, max: 6000 }).map((n) => ['spec', ...Array<string>(n).fill('a')]),
  },
);
/** A value nested `n` arrays deep. */
const nested = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));
const value = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom(0, -1, 1e308, 3601, 9.5, '', 'Nope', true, null) },
  { weight: 1, arbitrary: fc.integer({ min: 17, max: 3000 }).map(nested) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(STASH_LIMITS.maxChars)) },
);
const entry = fc.record({ p: path, v: value, b: value }, { requiredKeys: ['p'] });
const stashObject = fc.dictionary(
  fc.oneof(fc.constantFrom(...VERSIONS, '__proto__', 'v9'), fc.string({ maxLength: 4 })),
  fc.array(entry, { maxLength: 6 }),
  { maxKeys: 3 },
);
const stashText = fc.oneof(
  { weight: 8, arbitrary: stashObject.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('{', '[]', 'null', '"x"', '{"v2": 5}', '{"v2": [{"p": "spec"}]}') },
  { weight: 1, arbitrary: fc.string() },
);
type Signing = 'unsigned' | 'forged' | 'other uid' | 'malformed mac' | 'signed';
const signing = fc.constantFrom<Signing>('unsigned', 'forged', 'other uid', 'malformed mac', 'signed');

function withStash(o: LooseAITask, text: string, how: Signing): LooseAITask {
  const uid = o.metadata.uid ?? '';
  const mac = {
    unsigned: undefined,
    forged: signStash(Buffer.alloc(32, 1), uid, text),
    'other uid': signStash(KEY, `${uid}-other`, text),
    'malformed mac': 'hmac-sha256:x',
    signed: signStash(KEY, uid, text),
  }[how];
  const annotations: Record<string, string> = { ...o.metadata.annotations, [CONVERSION_ANNOTATION]: text };
  if (mac !== undefined) annotations[CONVERSION_MAC_ANNOTATION] = mac;
  return { ...o, metadata: { ...o.metadata, annotations } };
}

const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

function assertWithinBounds(out: LooseAITask, to: VersionName): void {
  const props = objectSchema(to).properties ?? {};
  const found = [
    ...violations(props['spec'] ?? {}, out.spec, 'spec'),
    ...(out.status === undefined ? [] : violations(props['status'] ?? {}, out.status, 'status')),
  ];
  assert.deepEqual(found, [], `out of ${to} bounds`);
}

const tasks = fc.oneof(v1alpha1Task, v1Task, v2Task);

test('a hostile stash never throws, never touches a prototype and never leaves the target bounds', () => {
  fc.assert(
    fc.property(tasks, stashText, signing, fc.constantFrom(...VERSIONS), (o, text, how, to) => {
      const input = withStash(o, text, how);
      const reasons: string[] = [];
      const out = convert(input, `${G}/${to}`, { key: KEY, onStashRejected: (r) => reasons.push(r.reason) });
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
      for (const k of ['paused', 'x', 'a', 'intervalSeconds'])
        assert.equal(({} as Record<string, unknown>)[k], undefined, `Object.prototype.${k}`);
      if (`${G}/${to}` === o.apiVersion) return;
      assertWithinBounds(out, to);
      JSON.stringify(out);
      if (how !== 'signed') {
        assert.ok(reasons.length > 0, 'an unvouched stash is reported');
        const plain = convert(o, `${G}/${to}`, { key: KEY });
        assert.deepEqual({ spec: out.spec, status: out.status }, { spec: plain.spec, status: plain.status });
      }
    }),
    { seed: SEED, numRuns: 1000 },
  );
});

test('a stash signed for another object, or with another key, is ignored whole', () => {
  fc.assert(
    fc.property(v2Task, fc.constantFrom<VersionName>('v1alpha1', 'v1'), (hub, spoke) => {
      const old = convert(hub, `${G}/${spoke}`, { key: KEY });
      const text = old.metadata.annotations?.[CONVERSION_ANNOTATION];
      fc.pre(text !== undefined);
      const edited = { ...old, spec: { ...old.spec } };
      for (const [how, reason] of [
        ['other uid', 'foreign_uid'],
        ['forged', 'forged'],
      ] as const) {
        const reasons: string[] = [];
        const back = convert(
          withStash({ ...edited, metadata: { ...edited.metadata, uid: 'u-1' } }, text, how),
          `${G}/v2`,
          {
            key: KEY,
            onStashRejected: (r) => reasons.push(r.reason),
          },
        );
        assert.deepEqual(reasons, [reason]);
        const bare = convert(
          { ...edited, metadata: { ...edited.metadata, uid: 'u-1', annotations: {} } },
          `${G}/v2`,
          { key: KEY },
        );
        assert.deepEqual(back.spec, bare.spec);
      }
    }),
    { seed: SEED + 1, numRuns: 300 },
  );
});

test('the entries under one field are checked together: a kind comes in with its apiVersion, never without', async (t) => {
  const props = objectSchema('v2').properties ?? {};
  const schema = { spec: props['spec'] ?? {}, status: props['status'] ?? {} };
  const base = {
    spec: {
      target: { kind: 'Deployment', name: 'redis' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
    },
  };
  const kind: DiffEntry = { p: ['spec', 'target', 'kind'], v: 'Shard', b: 'Deployment' };
  const apiVersion = (v: string): DiffEntry => ({ p: ['spec', 'target', 'apiVersion'], v });
  const dryRun: DiffEntry = { p: ['spec', 'dryRun'], v: true };
  const rows: [string, DiffEntry[], Record<string, unknown>, string[]][] = [
    [
      'kind, then its apiVersion',
      [kind, apiVersion('db.example.com/v1')],
      { apiVersion: 'db.example.com/v1', kind: 'Shard', name: 'redis' },
      [],
    ],
    [
      'apiVersion, then its kind',
      [apiVersion('db.example.com/v1'), kind],
      { apiVersion: 'db.example.com/v1', kind: 'Shard', name: 'redis' },
      [],
    ],
    ['a kind alone breaks the rule', [kind], { kind: 'Deployment', name: 'redis' }, ['out_of_bounds']],
    [
      'a kind with an apiVersion off its pattern: both skipped',
      [kind, apiVersion('db.example.com/V1'), dryRun],
      { kind: 'Deployment', name: 'redis' },
      ['out_of_bounds', 'out_of_bounds'],
    ],
    [
      'an apiVersion alone is valid',
      [apiVersion('apps/v1')],
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'redis' },
      [],
    ],
  ];
  for (const [name, entries, target, reasons] of rows) {
    await t.test(name, () => {
      const got: string[] = [];
      const out = applyStash(base, entries, schema, (r) => got.push(r.reason));
      assert.deepStrictEqual(out.spec['target'], target);
      assert.deepStrictEqual(got, reasons);
      if (entries.includes(dryRun))
        assert.equal(out.spec['dryRun'], true, 'another field is applied on its own');
    });
  }
});
