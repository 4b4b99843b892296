// observeTarget's verdicts on a target the caches do not hold: missing (TargetNotFound), or
// refused by the Deployment cache (TargetRefused, with the cache's reason and sentence), and
// found when the cache holds it; a target whose selector cannot be listed with is
// TargetInvalid. Table test over a stand-in of the caches.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as v2 from '../api/schema/v2.ts';
import { decide } from './decision/decide.ts';
import { TargetInvalidError } from './edges/target-invalid.ts';
import { invalidTarget, observeTarget, type TargetSources } from './observe.ts';
import type { Refusal } from './runtime/cache-budget.ts';
import type { Informer } from './runtime/informer.ts';

const task: v2.AITask = {
  apiVersion: 'aiops.example.com/v2',
  kind: 'AITask',
  metadata: { name: 't', namespace: 'ns' },
  spec: {
    target: { kind: 'Deployment', name: 'web' },
    trigger: { query: 'vector(0)', threshold: 1 },
    remediation: { action: 'Noop' },
  },
};

const taskCache = {
  byIndex: () => ['ns/t'],
  get: () => task,
} as unknown as Informer<v2.AITask>;

test('a missing target is TargetNotFound; one the cache refused is TargetRefused, saying why', () => {
  const refused: Refusal = {
    reason: 'NotAdmitted',
    message: 'its selector has 40 terms, more than the 32 the operator reads',
  };
  const sources: TargetSources = { taskCache, allowCrossNamespace: false };
  assert.deepEqual(observeTarget(sources, 'ns/t', task, { refused }), {
    found: false,
    reason: 'TargetRefused',
    message:
      'Deployment ns/web is not read by the operator (NotAdmitted): its selector has 40 terms, more than the 32 the operator reads',
  });
  assert.deepEqual(observeTarget(sources, 'ns/t', task, {}), {
    found: false,
    reason: 'TargetNotFound',
    message: 'Deployment ns/web does not exist',
  });
  assert.deepEqual(
    observeTarget(sources, 'ns/t', task, { workload: { metadata: { name: 'web' }, spec: { replicas: 3 } } }),
    { found: true, replicas: 3 },
  );
});

test('a target kind the operator may not list is TargetRefused, naming the missing grant', () => {
  const grant =
    'the operator may not list and watch deployments in API group apps (forbidden); an admin grants them in its ClusterRole';
  const sources: TargetSources = { taskCache, allowCrossNamespace: false };
  assert.deepEqual(
    observeTarget(sources, 'ns/t', task, { refused: { reason: 'Forbidden', message: grant } }),
    {
      found: false,
      reason: 'TargetRefused',
      message: `Deployment ns/web is not read by the operator (Forbidden): ${grant}`,
    },
  );
});

test('a target whose selector cannot be listed with is TargetInvalid, naming the object, the field and why; decide stalls on it', () => {
  const err = new TargetInvalidError(
    'Deployment ns/web',
    'spec.selector',
    'was refused by the apiserver: bad',
  );
  const invalid = invalidTarget(task, err);
  if (invalid.found) assert.fail('found');
  assert.deepEqual(invalid, {
    found: false,
    reason: 'TargetInvalid',
    message:
      'the spec.selector of Deployment ns/web was refused by the apiserver: bad; the operator does not act on Deployment ns/web until that is fixed',
  });
  assert.deepEqual(decide(task, invalid, { ok: true, value: 5 }, 0), {
    kind: 'targetMissing',
    reason: 'TargetInvalid',
    message: invalid.message,
  });
});
