// Two seed behaviours of the AITask API shown on the real apiserver (with the conversion
// webhook between versions): the v1 schema's `intervalSeconds` default of 60 lands on an
// object created at v1 without it, and reads back at v1 and at v2 (the storage version, where
// the schema has no default: the 60 was stored); and a status whose phase or condition status
// lies outside the schema's enums is refused with 422 through the status subresource, at
// each version that has the enum, leaving the stored status as it was.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aitaskResource } from '../../api/aitask-client.ts';
import type { VersionName } from '../../api/crd.ts';
import { InvalidError } from '../../lib/kube/errors.ts';
import { resourcePath } from '../../lib/kube/resources.ts';
import { metaTime } from '../../api/status/conditions.ts';
import { freshNamespace, testAITasks, testTransport } from '../support/cluster.ts';

test('v1: an AITask created without intervalSeconds gets 60, read back at v1 and at v2', async (t) => {
  const ns = await freshNamespace('seed-interval', t.after.bind(t));
  const v1 = await testAITasks('v1');
  const created = await v1.create(ns, {
    apiVersion: 'aiops.example.com/v1',
    kind: 'AITask',
    metadata: { name: 'no-interval' },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'scale_up' },
  });
  assert.equal(created.spec.intervalSeconds, 60, 'the create answer carries the default');
  assert.equal((await v1.get(ns, 'no-interval')).spec.intervalSeconds, 60, 'read at v1');
  const v2 = await (await testAITasks('v2')).get(ns, 'no-interval');
  assert.equal(v2.spec.intervalSeconds, 60, 'read at v2: the default was stored, not only shown at v1');
});

/** A status write the schema must refuse, at `version`. */
interface Case {
  readonly what: string;
  readonly version: Exclude<VersionName, 'v1alpha1'>;
  readonly status: Record<string, unknown>;
  readonly field: RegExp;
}

const condition = <S extends string>(status: S) => ({
  type: 'Ready',
  status,
  lastTransitionTime: metaTime(new Date()),
  reason: 'SeedCheck',
  message: 'written by the test',
});

const CASES: readonly Case[] = [
  {
    what: 'a phase no version knows (v2)',
    version: 'v2',
    status: { phase: 'Exploded' },
    field: /status\.phase: Unsupported value: "Exploded"/,
  },
  {
    what: 'a phase no version knows (v1)',
    version: 'v1',
    status: { phase: 'Exploded' },
    field: /status\.phase: Unsupported value: "Exploded"/,
  },
  {
    what: "a v2-only phase written at v1 (v1's enum is its own)",
    version: 'v1',
    status: { phase: 'Paused' },
    field: /status\.phase: Unsupported value: "Paused"/,
  },
  {
    what: 'a condition status outside True/False/Unknown (v2)',
    version: 'v2',
    status: { phase: 'Monitoring', conditions: [condition('Maybe')] },
    field: /status\.conditions\[0\]\.status: Unsupported value: "Maybe"/,
  },
  {
    what: 'a condition status outside True/False/Unknown (v1)',
    version: 'v1',
    status: { phase: 'Monitoring', conditions: [condition('Yes')] },
    field: /status\.conditions\[0\]\.status: Unsupported value: "Yes"/,
  },
];

test('a status with a phase or condition outside the enums is refused (422) through the status subresource', async (t) => {
  const ns = await freshNamespace('seed-enums', t.after.bind(t));
  const v2 = await testAITasks('v2');
  await v2.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'enums' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
    },
  });
  const accepted = await v2.patchStatus(ns, 'enums', {
    phase: 'Monitoring',
    conditions: [condition('True')],
  });
  assert.equal(accepted.status?.phase, 'Monitoring', 'a status within the enums is accepted');
  const transport = await testTransport();
  for (const c of CASES) {
    // The raw object as read at the case's version, its status replaced: the typed client
    // would not let an out-of-enum value be written at all.
    const path = resourcePath(aitaskResource(c.version), ns, 'enums', 'status');
    const live = await transport.request<Record<string, unknown>>({ path });
    const err = await transport.request({ method: 'PUT', path, body: { ...live, status: c.status } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof InvalidError, `${c.what}: refused as Invalid, got ${String(err)}`);
    assert.equal(err.code, 422, c.what);
    assert.match(err.message, c.field, c.what);
  }
  const stored = await v2.get(ns, 'enums');
  assert.equal(stored.status?.phase, 'Monitoring', 'no refused write reached storage');
  assert.deepEqual(
    stored.status.conditions?.map((x) => x.status),
    ['True'],
  );
});
