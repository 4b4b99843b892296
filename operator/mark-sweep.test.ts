import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CORDONED_BY_ANNOTATION,
  CORDONED_BY_NAMESPACE_ANNOTATION,
  cordonState,
  markRelease,
  type MarkRelease,
} from '../api/cordon.ts';
import { createLogger } from '../lib/log.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { EventSpec } from './decision/vocabulary.ts';
import { sweepMarks, type MarkSweepDeps } from './mark-sweep.ts';
import type { Node } from './runtime/kinds.ts';
import { TASK_PAGE_SIZE } from './runtime/trim.ts';

const HELD = [
  {
    manager: 'aiops-operator',
    fieldsV1: {
      'f:metadata': { 'f:annotations': { [`f:${CORDONED_BY_ANNOTATION}`]: {} } },
      'f:spec': { 'f:unschedulable': {} },
    },
  },
];

function node(name: string, uid: string, unschedulable: boolean): Node {
  return {
    metadata: {
      name,
      resourceVersion: '1',
      annotations: { [CORDONED_BY_ANNOTATION]: uid, [CORDONED_BY_NAMESPACE_ANNOTATION]: 'a' },
      managedFields: HELD,
    },
    spec: { unschedulable },
  };
}

function task(name: string, uid: string, cordonedNodes: string[]): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, namespace: 'a', uid, resourceVersion: '5' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'CordonNode' },
    },
    status: { cordonedNodes },
  };
}

/** A fake cluster: nodes, cached and live AITasks; records what the sweep did. */
function world(nodes: Node[], cached: v2.AITask[], live: v2.AITask[]) {
  const released: MarkRelease[] = [];
  const statuses: v2.AITask[] = [];
  const events: EventSpec[] = [];
  let lists = 0;
  const limits: (number | undefined)[] = [];
  const deps: MarkSweepDeps = {
    actions: {
      cordonStates: () => Promise.resolve(nodes.map(cordonState)),
      releaseMark: (r, exists, scope) => {
        const n = nodes.find((x) => x.metadata.name === r.node);
        const now = n === undefined ? undefined : markRelease(n, exists, scope);
        if (now) released.push(now);
        return Promise.resolve(now);
      },
    },
    tasks: {
      forEachPage: (_ns, opts, each) => {
        lists++;
        limits.push(opts.limit);
        const size = opts.limit ?? 500;
        for (let i = 0; i < live.length; i += size) each(live.slice(i, i + size));
        return Promise.resolve();
      },
      get: (_ns, name) => {
        const t = live.find((x) => x.metadata.name === name);
        return t ? Promise.resolve(t) : Promise.reject(new Error('not found'));
      },
      replaceStatus: (t) => {
        statuses.push(t);
        return Promise.resolve(t);
      },
    },
    taskCache: { list: () => cached },
    events: {
      record: (_t, specs) => {
        events.push(...specs);
        return Promise.resolve();
      },
    },
    log: createLogger('test', { level: 'error', write: () => undefined }),
    namespace: 'a',
  };
  return { deps, released, statuses, events, lists: () => lists, limits };
}

test('sweepMarks: an orphan is released only once a live list confirms its AITask is gone', async () => {
  const shard = task('other-shard', 'u-live', ['n1']);
  const w = world([node('n1', 'u-live', true), node('n2', 'u-gone', true)], [], [shard]);
  const done = await sweepMarks(w.deps);
  assert.equal(w.lists(), 1, 'one live list for the candidates the cache could not place');
  assert.deepEqual(w.limits, [TASK_PAGE_SIZE], 'read in pages whose bytes the apiserver bounds');
  assert.deepEqual(
    done.map((r) => [r.node, r.why, r.uncordon]),
    [['n2', 'orphaned', true]],
    'the mark of a task the cache missed but the apiserver has is kept',
  );
  assert.deepEqual(w.statuses, []);
});

test('sweepMarks: a mark whose cordon was lifted is dropped and leaves the status of its AITask', async () => {
  const web = task('web', 'u-web', ['n1', 'n9']);
  const w = world([node('n1', 'u-web', false)], [web], [web]);
  const done = await sweepMarks(w.deps);
  assert.deepEqual(
    done.map((r) => [r.node, r.why, r.uncordon]),
    [['n1', 'lifted', false]],
  );
  assert.equal(w.lists(), 0, 'no live list when every mark belongs to a cached task');
  assert.deepEqual(w.statuses[0]?.status?.cordonedNodes, ['n9']);
  assert.deepEqual(
    w.events.map((e) => e.reason),
    ['CordonMarkDropped'],
  );
});

test('sweepMarks: nothing to do reads nothing else', async () => {
  const web = task('web', 'u-web', ['n1']);
  const w = world([node('n1', 'u-web', true), { metadata: { name: 'plain' }, spec: {} }], [web], [web]);
  assert.deepEqual(await sweepMarks(w.deps), []);
  assert.equal(w.lists(), 0);
});
