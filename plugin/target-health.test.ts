import assert from 'node:assert/strict';
import { test } from 'node:test';
import { palette } from './format.ts';
import type { LiveTarget, StatefulSetLike } from './kinds.ts';
import { renderDescribe } from './describe-text.ts';
import { describeView } from './describe-view.ts';
import {
  desiredReplicas,
  statefulSetRollout,
  targetHealth,
  type RolloutState,
  type TargetHealth,
} from './target-health.ts';
import type * as v2 from '../api/schema/v2.ts';

/** A StatefulSet of 3 replicas, rolled out at revision r1, with `over` laid on top. */
function sts(over: {
  generation?: number;
  replicas?: number;
  strategy?: string;
  partition?: number;
  status?: NonNullable<StatefulSetLike['status']>;
}): StatefulSetLike {
  return {
    metadata: { name: 'redis', namespace: 'cache', generation: over.generation ?? 2 },
    spec: {
      replicas: over.replicas ?? 3,
      updateStrategy: {
        type: over.strategy ?? 'RollingUpdate',
        ...(over.partition !== undefined ? { rollingUpdate: { partition: over.partition } } : {}),
      },
    },
    status: {
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: 'redis-r1',
      updateRevision: 'redis-r1',
      ...over.status,
    },
  };
}

void test('a StatefulSet rollout is judged as kubectl rollout status judges it (table)', () => {
  const cases: [string, StatefulSetLike, RolloutState, RegExp][] = [
    ['rolled out', sts({}), 'complete', /^3 pods at revision redis-r1$/],
    ['OnDelete has no rollout', sts({ strategy: 'OnDelete' }), 'unknown', /OnDelete update strategy/],
    [
      'a new generation not observed yet',
      sts({ generation: 3 }),
      'progressing',
      /observe generation 3 \(observed 2\)/,
    ],
    [
      'never observed',
      sts({ status: { observedGeneration: 0 } }),
      'progressing',
      /observe generation 2 \(observed 0\)/,
    ],
    [
      'pods not ready',
      sts({ status: { readyReplicas: 1 } }),
      'progressing',
      /waiting for 2 of 3 pods to be ready/,
    ],
    [
      'scaled up, the new pod not ready',
      sts({ replicas: 4 }),
      'progressing',
      /waiting for 1 of 4 pods to be ready/,
    ],
    [
      'rolling to a new revision',
      sts({ status: { updatedReplicas: 1, updateRevision: 'redis-r2' } }),
      'progressing',
      /rolling update: 1 of 3 pods at revision redis-r2/,
    ],
    [
      'every pod updated and ready, the revision moved',
      sts({ status: { currentRevision: 'redis-r2', updateRevision: 'redis-r2' } }),
      'complete',
      /3 pods at revision redis-r2/,
    ],
    [
      'partition 0 is an ordinary rolling update',
      sts({ partition: 0, status: { updatedReplicas: 2, updateRevision: 'redis-r2' } }),
      'progressing',
      /rolling update: 2 of 3 pods/,
    ],
    [
      'partitioned, short of the pods above the partition',
      sts({ partition: 1, status: { updatedReplicas: 1, updateRevision: 'redis-r2' } }),
      'progressing',
      /partition 1\): 1 of 2 pods updated/,
    ],
    [
      'partitioned, the pods above the partition updated',
      sts({ partition: 1, status: { updatedReplicas: 2, updateRevision: 'redis-r2' } }),
      'complete',
      /partitioned rollout complete \(partition 1\): 2 pods updated/,
    ],
    [
      'scaled to zero',
      sts({ replicas: 0, status: { readyReplicas: 0, currentReplicas: 0, updatedReplicas: 0 } }),
      'complete',
      /^0 pods at revision redis-r1$/,
    ],
    ['no status yet', { metadata: { generation: 1 }, spec: { replicas: 1 } }, 'progressing', /observed none/],
  ];
  for (const [name, s, state, message] of cases) {
    const got = statefulSetRollout(s);
    assert.equal(got.state, state, name);
    assert.match(got.message, message, name);
  }
});

void test('targetHealth reads each kind: a Deployment as before, a StatefulSet with its revisions', () => {
  assert.deepEqual(
    targetHealth({
      kind: 'Deployment',
      object: {
        spec: { replicas: 2 },
        status: {
          readyReplicas: 1,
          updatedReplicas: 2,
          availableReplicas: 1,
          conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }],
        },
      },
    }),
    {
      found: true,
      kind: 'Deployment',
      desired: 2,
      ready: 1,
      updated: 2,
      available: 1,
      conditions: ['Available=False (MinimumReplicasUnavailable)'],
    },
  );
  assert.deepEqual(targetHealth({ kind: 'StatefulSet', object: sts({ status: { readyReplicas: 2 } }) }), {
    found: true,
    kind: 'StatefulSet',
    desired: 3,
    ready: 2,
    current: 3,
    updated: 3,
    available: 3,
    generation: 2,
    observedGeneration: 2,
    currentRevision: 'redis-r1',
    updateRevision: 'redis-r1',
    rollout: { state: 'progressing', message: 'waiting for 1 of 3 pods to be ready' },
  });
  assert.deepEqual(targetHealth({ kind: 'StatefulSet', object: {} }), {
    found: true,
    kind: 'StatefulSet',
    desired: 1,
    ready: 0,
    current: 0,
    updated: 0,
    available: 0,
    rollout: {
      state: 'progressing',
      message: 'waiting for the controller to observe generation ? (observed none)',
    },
  });
});

void test('describe names the target by its kind and shows a StatefulSet its rollout', () => {
  const task = (kind: v2.TargetKind): v2.AITask => ({
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'redis-mem', namespace: 'cache', generation: 1 },
    spec: {
      target: { kind, name: 'redis' },
      trigger: { threshold: 0.9 },
      remediation: { action: 'RestartPod' },
    },
  });
  const text = (kind: v2.TargetKind, s: StatefulSetLike | undefined): string =>
    renderDescribe(
      describeView(
        task(kind),
        s === undefined ? { found: false } : targetHealth({ kind: 'StatefulSet', object: s }),
        [],
      ),
      new Date('2026-01-01T00:00:00Z'),
      palette(false),
      false,
    );
  const rolling = text(
    'StatefulSet',
    sts({ status: { readyReplicas: 3, updatedReplicas: 1, updateRevision: 'redis-r2' } }),
  );
  assert.match(rolling, /^Target: +StatefulSet cache\/redis \(the AITask's namespace\)$/m);
  assert.match(
    rolling,
    /^Target Health: +StatefulSet cache\/redis: 3\/3 ready, 3 current, 1 updated, 3 available; rollout progressing: rolling update: 1 of 3 pods at revision redis-r2$/m,
  );
  assert.match(
    text('StatefulSet', sts({})),
    /^Target Health: +StatefulSet cache\/redis: 3\/3 ready, .*; rollout complete: 3 pods at revision redis-r1$/m,
  );
  assert.match(text('StatefulSet', undefined), /^Target Health: +StatefulSet cache\/redis not found$/m);
  assert.match(text('Deployment', undefined), /^Target Health: +Deployment cache\/redis not found$/m);
});

void test('a kind read through /scale: desired and current replicas and selector, rollout not claimed (table)', () => {
  const shard = 'Shard.test.aiops.example.com';
  const unknown = {
    state: 'unknown',
    message: `not tracked for ${shard}: its /scale says how many replicas, not whether they are ready or updated`,
  } as const;
  const cases: [string, LiveTarget & { kind: 'Scale' }, TargetHealth, number][] = [
    [
      'scaled and settled',
      {
        kind: 'Scale',
        type: shard,
        object: {
          metadata: { uid: 'u1' },
          spec: { replicas: 3 },
          status: { replicas: 3, selector: 'app=s1' },
        },
      },
      {
        found: true,
        kind: 'Scale',
        type: shard,
        desired: 3,
        current: 3,
        selector: 'app=s1',
        rollout: unknown,
      },
      3,
    ],
    [
      'scaling up, no selector published yet',
      {
        kind: 'Scale',
        type: shard,
        object: { spec: { replicas: 4 }, status: { replicas: 1, selector: '' } },
      },
      { found: true, kind: 'Scale', type: shard, desired: 4, current: 1, rollout: unknown },
      4,
    ],
    [
      'scaled to zero: a Scale omits 0 replicas',
      { kind: 'Scale', type: shard, object: { spec: {}, status: {} } },
      { found: true, kind: 'Scale', type: shard, desired: 0, current: 0, rollout: unknown },
      0,
    ],
  ];
  for (const [name, live, want, desired] of cases) {
    assert.deepEqual(targetHealth(live), want, name);
    assert.equal(desiredReplicas(live), desired, name);
  }
  assert.equal(desiredReplicas({ kind: 'Deployment', object: {} }), 1, 'a Deployment defaults to 1');
  assert.equal(desiredReplicas({ kind: 'StatefulSet', object: {} }), 1, 'a StatefulSet defaults to 1');
});

void test('describe names a custom kind by Kind.group with its apiVersion, and its /scale health', () => {
  const task: v2.AITask = {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'shard-load', namespace: 'db', generation: 1 },
    spec: {
      target: { apiVersion: 'test.aiops.example.com/v1', kind: 'Shard', name: 's1', namespace: 'db' },
      trigger: { threshold: 0.9 },
      remediation: { action: 'ScaleUp' },
    },
  };
  const text = (h: TargetHealth): string =>
    renderDescribe(describeView(task, h, []), new Date('2026-01-01T00:00:00Z'), palette(false), false);
  const read = targetHealth({
    kind: 'Scale',
    type: 'Shard.test.aiops.example.com',
    object: { spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=s1,tier=db' } },
  });
  const shown = text(read);
  assert.match(
    shown,
    /^Target: +Shard\.test\.aiops\.example\.com db\/s1 \(apiVersion test\.aiops\.example\.com\/v1\)$/m,
  );
  assert.match(
    shown,
    /^Target Health: +Shard\.test\.aiops\.example\.com db\/s1: 2\/3 current, selector app=s1,tier=db; rollout unknown: not tracked for Shard\.test\.aiops\.example\.com: .*$/m,
  );
  assert.deepEqual(describeView(task, read, []).target, {
    apiVersion: 'test.aiops.example.com/v1',
    kind: 'Shard',
    name: 's1',
    namespace: 'db',
    namespaceFrom: 'spec',
  });
  assert.match(
    text({
      found: false,
      error: 'cannot be read: Shard (test.aiops.example.com/v1) does not serve the /scale subresource',
    }),
    /^Target Health: +Shard\.test\.aiops\.example\.com db\/s1 cannot be read: Shard \(test\.aiops\.example\.com\/v1\) does not serve the \/scale subresource$/m,
  );
});
