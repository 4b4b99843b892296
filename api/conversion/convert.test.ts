// Table tests: one row per field mapping between v1alpha1, v1 and v2, plus the guarded-restore
// rules (an edit through an old version wins over stashed data) and bad input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convert, type LooseAITask } from './convert.ts';
import { ConversionError } from './errors.ts';
import { CONVERSION_ANNOTATION } from '../install.ts';
import { formatDuration, parseDuration } from './duration.ts';

const G = 'aiops.example.com';
const opts = { key: Buffer.alloc(32, 1) };
const meta = { name: 'web-heal', namespace: 'prod' };
const v1alpha1 = (spec: Record<string, unknown>, status?: Record<string, unknown>): LooseAITask => ({
  apiVersion: `${G}/v1alpha1`,
  kind: 'AITask',
  metadata: { ...meta },
  spec,
  ...(status ? { status } : {}),
});
const v1 = (spec: Record<string, unknown>, status?: Record<string, unknown>): LooseAITask => ({
  apiVersion: `${G}/v1`,
  kind: 'AITask',
  metadata: { ...meta },
  spec,
  ...(status ? { status } : {}),
});

test('mapping table: v1alpha1 ↔ v1', async (t) => {
  const rows: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'threshold 80 % ↔ 0.8',
      { target: 'web', threshold: 80, action: 'Noop' },
      { targetDeployment: 'web', threshold: 0.8, action: 'noop' },
    ],
    [
      'interval 5m ↔ 300 s',
      { target: 'web', threshold: 7, action: 'ScaleUp', interval: '5m' },
      { targetDeployment: 'web', threshold: 0.07, action: 'scale_up', intervalSeconds: 300 },
    ],
    [
      'RestartPod ↔ restart_pod',
      { target: 'web', threshold: 0, action: 'RestartPod' },
      { targetDeployment: 'web', threshold: 0, action: 'restart_pod' },
    ],
    [
      '"ns/name" ↔ targetDeployment + namespace',
      { target: 'shop/web', threshold: 100, action: 'CordonNode' },
      { targetDeployment: 'web', namespace: 'shop', threshold: 1, action: 'cordon_node' },
    ],
    [
      'llmEndpoint ↔ llmEndpoint',
      { target: 'web', threshold: 50, action: 'ScaleDown', llmEndpoint: 'https://llm.example.com/v1' },
      {
        targetDeployment: 'web',
        threshold: 0.5,
        action: 'scale_down',
        llmEndpoint: 'https://llm.example.com/v1',
      },
    ],
  ];
  for (const [name, a, b] of rows) {
    await t.test(name, () => {
      assert.deepStrictEqual(convert(v1alpha1(a), `${G}/v1`, opts).spec, b);
      assert.deepStrictEqual(convert(v1(b), `${G}/v1alpha1`, opts).spec, a);
    });
  }
});

test('mapping table: v1 → v2 structure', () => {
  const hub = convert(
    v1({
      targetDeployment: 'web',
      namespace: 'shop',
      threshold: 0.9,
      action: 'scale_up',
      intervalSeconds: 30,
      llmEndpoint: 'https://llm.example.com/v1',
    }),
    `${G}/v2`,
    opts,
  );
  assert.deepStrictEqual(hub.spec, {
    target: { kind: 'Deployment', name: 'web', namespace: 'shop' },
    trigger: { threshold: 0.9 },
    remediation: { action: 'ScaleUp' },
    intervalSeconds: 30,
    decision: { mode: 'LLM', llm: { endpoint: 'https://llm.example.com/v1' } },
  });
  assert.equal(hub.metadata.annotations, undefined, 'nothing to stash for a plain v1 object');
});

test('an unusual spelling survives: interval "300s" stays "300s" through the hub', () => {
  const hub = convert(
    v1alpha1({ target: 'web', threshold: 1, action: 'Noop', interval: '300s' }),
    `${G}/v2`,
    opts,
  );
  assert.equal(hub.spec['intervalSeconds'], 300);
  assert.equal(convert(hub, `${G}/v1alpha1`, opts).spec['interval'], '300s');
  const changed = { ...hub, spec: { ...hub.spec, intervalSeconds: 120 } };
  assert.equal(
    convert(changed, `${G}/v1alpha1`, opts).spec['interval'],
    '2m',
    'a new value through v2 wins over the stash',
  );
});

test('v2-only fields survive a read-modify-write through v1alpha1 and v1', () => {
  const hub: LooseAITask = {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { ...meta },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'sum(rate(errors[1m]))', threshold: 0.075, operator: 'LessThan', forSeconds: 120 },
      remediation: {
        action: 'ScaleUp',
        scale: { step: 2, maxReplicas: 9 },
        cooldownSeconds: 60,
        maxAttempts: 4,
      },
      dryRun: true,
      approval: 'Manual',
    },
    status: { phase: 'AwaitingApproval', attempts: 2 },
  };
  for (const spoke of ['v1alpha1', 'v1']) {
    const old = convert(hub, `${G}/${spoke}`, opts);
    assert.ok(old.metadata.annotations?.[CONVERSION_ANNOTATION], `${spoke} carries the stash`);
    const edited = { ...old, spec: { ...old.spec, action: spoke === 'v1' ? 'scale_down' : 'ScaleDown' } };
    const back = convert(edited, `${G}/v2`, opts);
    assert.equal(
      (back.spec['remediation'] as Record<string, unknown>)['action'],
      'ScaleDown',
      'the edit through the old version wins',
    );
    assert.deepStrictEqual(
      back.spec['trigger'],
      hub.spec['trigger'],
      `${spoke}: trigger kept (0.075 is not a whole percent)`,
    );
    assert.deepStrictEqual((back.spec['remediation'] as Record<string, unknown>)['scale'], {
      step: 2,
      maxReplicas: 9,
    });
    assert.equal(back.spec['dryRun'], true);
    assert.equal(back.spec['approval'], 'Manual');
    assert.deepStrictEqual(back.status, hub.status);
    assert.equal(back.metadata.annotations, undefined, 'the stash is consumed on the way back');
  }
});

test('a StatefulSet or custom-kind target reads as targetDeployment in v1alpha1 and v1 and keeps its kind and apiVersion through an edit there', async (t) => {
  const targets: { apiVersion?: string; kind: string; name: string; namespace: string }[] = [
    { kind: 'StatefulSet', name: 'redis', namespace: 'cache' },
    { apiVersion: 'db.example.com/v1beta1', kind: 'Shard', name: 'redis', namespace: 'cache' },
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'redis', namespace: 'cache' },
  ];
  const rows: [string, string, Record<string, unknown>, string][] = [
    ['v1alpha1', 'an action edit', { action: 'Noop' }, 'redis'],
    ['v1', 'an action edit', { action: 'noop' }, 'redis'],
    ['v1', 'a renamed target', { targetDeployment: 'valkey' }, 'valkey'],
    ['v1alpha1', 'a renamed target', { target: 'cache/valkey' }, 'valkey'],
  ];
  for (const target of targets) {
    const hub: LooseAITask = {
      apiVersion: `${G}/v2`,
      kind: 'AITask',
      metadata: { ...meta, uid: 'u-target' },
      spec: { target, trigger: { threshold: 1 }, remediation: { action: 'RestartPod' } },
    };
    const type = `${target.apiVersion ?? ''} ${target.kind}`.trim();
    for (const [spoke, what, edit, name] of rows) {
      await t.test(`${type}, ${spoke}: ${what}`, () => {
        const old = convert(hub, `${G}/${spoke}`, opts);
        assert.equal(old.spec['kind'], undefined);
        assert.equal(old.spec['apiVersion'], undefined);
        assert.equal(
          old.spec[spoke === 'v1' ? 'targetDeployment' : 'target'],
          spoke === 'v1' ? 'redis' : 'cache/redis',
        );
        assert.deepStrictEqual(convert(old, `${G}/v2`, opts), hub, 'unedited, it comes back whole');
        const back = convert({ ...old, spec: { ...old.spec, ...edit } }, `${G}/v2`, opts);
        assert.deepStrictEqual(
          back.spec['target'],
          { ...target, name },
          'the stashed kind and apiVersion are restored: their base (a Deployment, no apiVersion) is still in place',
        );
      });
    }
  }
  await t.test('a Deployment target without an apiVersion needs no stash', () => {
    const hub: LooseAITask = {
      apiVersion: `${G}/v2`,
      kind: 'AITask',
      metadata: { ...meta, uid: 'u-target' },
      spec: {
        target: { kind: 'Deployment', name: 'redis' },
        trigger: { threshold: 1 },
        remediation: { action: 'RestartPod' },
      },
    };
    const old = convert(hub, `${G}/v1`, opts);
    assert.equal(old.metadata.annotations, undefined, 'a Deployment target needs no stash');
    assert.deepStrictEqual(convert(old, `${G}/v2`, opts), hub);
  });
});

test('a threshold changed through v1alpha1 replaces the stashed fraction', () => {
  const hub: LooseAITask = {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { ...meta },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.075 },
      remediation: { action: 'Noop' },
    },
  };
  const old = convert(hub, `${G}/v1alpha1`, opts);
  assert.equal(old.spec['threshold'], 8);
  const back = convert({ ...old, spec: { ...old.spec, threshold: 50 } }, `${G}/v2`, opts);
  assert.deepStrictEqual(back.spec['trigger'], { threshold: 0.5 });
});

test('hub-only phases read as their nearest v1 phase and come back intact', () => {
  const hub: LooseAITask = {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { ...meta },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
    },
    status: { phase: 'Paused' },
  };
  const old = convert(hub, `${G}/v1`, opts);
  assert.equal(old.status?.['phase'], 'Monitoring');
  assert.equal(convert(old, `${G}/v2`, opts).status?.['phase'], 'Paused');
  assert.equal(
    convert({ ...old, status: { phase: 'Healing' } }, `${G}/v2`, opts).status?.['phase'],
    'Healing',
  );
});

test('bad input is refused with a ConversionError naming the problem', async (t) => {
  const ok = v1alpha1({ target: 'web', threshold: 1, action: 'Noop' });
  const cases: [string, unknown, string, RegExp][] = [
    ['not an object', 'x', `${G}/v2`, /must be a JSON object/],
    ['another kind', { ...ok, kind: 'Deployment' }, `${G}/v2`, /kind must be AITask/],
    ['unknown desired version', ok, `${G}/v9`, /unsupported apiVersion "aiops.example.com\/v9"/],
    [
      'unknown source version',
      { ...ok, apiVersion: 'apps/v1' },
      `${G}/v2`,
      /unsupported apiVersion "apps\/v1"/,
    ],
    ['missing spec', { ...ok, spec: undefined }, `${G}/v2`, /spec must be an object/],
    [
      'wrong type in spec',
      v1alpha1({ target: 5, threshold: 1, action: 'Noop' }),
      `${G}/v2`,
      /spec.target must be a string, got a number/,
    ],
  ];
  for (const [name, input, to, message] of cases) {
    await t.test(name, () =>
      assert.throws(
        () => convert(input, to, opts),
        (e: unknown) => e instanceof ConversionError && message.test(e.message),
      ),
    );
  }
});

test('a malformed stash is ignored, reported and dropped, never a failure', () => {
  const reasons: string[] = [];
  const out = convert(
    {
      ...v1alpha1({ target: 'web', threshold: 1, action: 'Noop' }),
      metadata: { ...meta, annotations: { [CONVERSION_ANNOTATION]: '{' } },
    },
    `${G}/v2`,
    { ...opts, onStashRejected: (r) => reasons.push(r.reason) },
  );
  assert.deepStrictEqual(out.spec['trigger'], { threshold: 0.01 });
  assert.deepStrictEqual(reasons, ['unsigned']);
  assert.equal(out.metadata.annotations, undefined, 'the unvouched stash is not carried on');
});

test('durations', () => {
  for (const [text, secs, canonical] of [
    ['90s', 90, '1m30s'],
    ['5m', 300, '5m'],
    ['1h30m', 5400, '1h30m'],
    ['1h', 3600, '1h'],
  ] as const) {
    assert.equal(parseDuration(text), secs);
    assert.equal(formatDuration(secs), canonical);
  }
  assert.equal(parseDuration(''), undefined);
  assert.equal(parseDuration('5x'), undefined);
});
