// Discovery's reading of an APIResourceList (kindsOf) and the group/versions it would ask
// about: table tests. The requests themselves run against the real apiserver in
// operator/scale-kinds.cluster.test.ts and plugin/kubectl-custom-target.cluster.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_VERSION_MAX_LENGTH, API_VERSION_PATTERN, kindsOf } from './discovery.ts';

test('kindsOf: each kind with its plural, scope and whether it serves /scale; malformed entries skipped', () => {
  const kinds = kindsOf({
    kind: 'APIResourceList',
    groupVersion: 'apps/v1',
    resources: [
      { name: 'statefulsets', namespaced: true, kind: 'StatefulSet' },
      { name: 'statefulsets/scale', namespaced: true, kind: 'Scale' },
      { name: 'statefulsets/status', namespaced: true, kind: 'StatefulSet' },
      { name: 'controllerrevisions', namespaced: true, kind: 'ControllerRevision' },
      { name: 'widgets', namespaced: false, kind: 'Widget' },
      { name: 7, kind: 'Broken' },
      { name: 'nokind' },
    ],
  });
  assert.deepEqual(Object.fromEntries(kinds), {
    StatefulSet: { plural: 'statefulsets', namespaced: true, scalable: true },
    ControllerRevision: { plural: 'controllerrevisions', namespaced: true, scalable: false },
    Widget: { plural: 'widgets', namespaced: false, scalable: false },
  });
  for (const answer of [undefined, null, 'x', { resources: 'x' }, []])
    assert.equal(kindsOf(answer).size, 0, JSON.stringify(answer));
});

test('only a group/version the schema would accept is ever asked about', () => {
  const re = new RegExp(API_VERSION_PATTERN);
  for (const ok of ['v1', 'apps/v1', 'argoproj.io/v1alpha1', 'db.example.com/v2beta3'])
    assert.ok(re.test(ok), ok);
  for (const bad of ['', '../api', 'apps/v1/x', 'Apps/v1', 'apps/1', 'apps/v0', 'apps/', 'v1beta'])
    assert.ok(!re.test(bad), bad);
  assert.equal(API_VERSION_MAX_LENGTH, 253 + 1 + 63);
});
