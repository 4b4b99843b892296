import assert from 'node:assert/strict';
import { test } from 'node:test';
import { palette } from './format.ts';
import { renderChanges, specChanges } from './spec-diff.ts';

void test('specChanges reports leaf changes with dotted paths, sorted', () => {
  const from = {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: 0.8 },
    intervalSeconds: 30,
    tags: ['a'],
  };
  const to = {
    target: { kind: 'Deployment', name: 'api' },
    trigger: { threshold: 0.8, forSeconds: 60 },
    tags: ['a', 'b'],
    'odd key': 1,
  };
  assert.deepEqual(specChanges(from, to), [
    { path: 'spec."odd key"', op: 'added', to: 1 },
    { path: 'spec.intervalSeconds', op: 'removed', from: 30 },
    { path: 'spec.tags', op: 'changed', from: ['a'], to: ['a', 'b'] },
    { path: 'spec.target.name', op: 'changed', from: 'web', to: 'api' },
    { path: 'spec.trigger.forSeconds', op: 'added', to: 60 },
  ]);
  assert.deepEqual(specChanges(from, structuredClone(from)), []);
});

void test("a target's kind change is a change of spec.target.kind, alone or with its name", () => {
  const web = { target: { kind: 'Deployment', name: 'web' } };
  assert.deepEqual(specChanges(web, { target: { kind: 'StatefulSet', name: 'web' } }), [
    { path: 'spec.target.kind', op: 'changed', from: 'Deployment', to: 'StatefulSet' },
  ]);
  const both = specChanges(web, { target: { kind: 'StatefulSet', name: 'redis' } });
  assert.equal(
    renderChanges(both, palette(false)),
    '  ~ spec.target.kind: "Deployment" → "StatefulSet"\n  ~ spec.target.name: "web" → "redis"\n',
  );
});

void test("a target's apiVersion is a field of its own: added, changed and removed as such", () => {
  const sts = { target: { kind: 'StatefulSet', name: 'db' } };
  const shard = { target: { apiVersion: 'test.aiops.example.com/v1', kind: 'Shard', name: 'db' } };
  assert.equal(
    renderChanges(specChanges(sts, shard), palette(false)),
    '  + spec.target.apiVersion: "test.aiops.example.com/v1"\n  ~ spec.target.kind: "StatefulSet" → "Shard"\n',
  );
  const v2 = { target: { ...shard.target, apiVersion: 'test.aiops.example.com/v2' } };
  assert.deepEqual(specChanges(shard, v2), [
    {
      path: 'spec.target.apiVersion',
      op: 'changed',
      from: 'test.aiops.example.com/v1',
      to: 'test.aiops.example.com/v2',
    },
  ]);
  assert.deepEqual(specChanges(shard, sts)[0], {
    path: 'spec.target.apiVersion',
    op: 'removed',
    from: 'test.aiops.example.com/v1',
  });
});

void test('renderChanges marks added, removed and changed fields', () => {
  const text = renderChanges(specChanges({ a: 1, b: 2 }, { b: 3, c: 'x' }), palette(false));
  assert.equal(text, '  - spec.a: 1\n  ~ spec.b: 2 → 3\n  + spec.c: "x"\n');
});
