import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildRevision, parseRevision, revisionName, revisionsToPrune, sortRevisions } from './revisions.ts';
import type * as v2 from './schema/v2.ts';

const task = (generation: number): v2.AITask => ({
  apiVersion: 'aiops.example.com/v2',
  kind: 'AITask',
  metadata: { name: 'web-cpu', namespace: 'ns', uid: 'u-1', generation },
  spec: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { threshold: generation },
    remediation: { action: 'Noop' },
  },
});

test('a revision round-trips generation and spec, owned by the task', () => {
  const cr = buildRevision(task(4));
  assert.equal(cr.metadata.name, 'web-cpu-g4');
  assert.equal(cr.metadata.ownerReferences?.[0]?.uid, 'u-1');
  assert.deepEqual(parseRevision(cr), { generation: 4, spec: task(4).spec, name: 'web-cpu-g4' });
});

test('pruning keeps the newest 10 generations', () => {
  const list = Array.from({ length: 13 }, (_, i) => buildRevision(task(i + 1)));
  assert.deepEqual(revisionsToPrune(list).sort(), ['web-cpu-g1', 'web-cpu-g2', 'web-cpu-g3']);
  assert.equal(sortRevisions(list)[0]?.generation, 13);
});

test('revision names stay valid for long task names', () => {
  const name = revisionName('a'.repeat(253), 12);
  assert.ok(name.length <= 253 && name.endsWith('-g12'));
});
