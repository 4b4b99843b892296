import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CordonState } from '../api/cordon.ts';
import { FINALIZER } from '../api/install.ts';
import { createLogger } from '../lib/log.ts';
import type * as v2 from '../api/schema/v2.ts';
import type { EventSpec } from './decision/vocabulary.ts';
import type { UncordonResult } from './edges/cordons.ts';
import { FINALIZE_CONCURRENCY, finalizeTask, NOTE_NAMES, type FinalizerDeps } from './finalize.ts';

const UID = 'uid-mine';
const log = createLogger('test', { write: () => undefined });

function task(cordonedNodes: string[]): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: {
      name: 'web',
      namespace: 'a',
      uid: UID,
      finalizers: [FINALIZER],
      deletionTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'CordonNode' },
    },
    status: { cordonedNodes },
  };
}

const state = (name: string, uid?: string): CordonState => ({
  name,
  resourceVersion: '1',
  unschedulable: uid !== undefined,
  ...(uid !== undefined ? { mark: { uid } } : {}),
  held: uid !== undefined,
});

/** Fake deps: the node view `states`; uncordon answers `answer(node)`; records what happened. */
function world(states: CordonState[], answer: (node: string) => Promise<UncordonResult>) {
  const looked: string[] = [];
  const events: EventSpec[] = [];
  const removed: string[] = [];
  let inFlight = 0;
  let most = 0;
  const deps: FinalizerDeps = {
    actions: {
      cordonStatesSince: () => Promise.resolve(states),
      uncordon: async (node) => {
        looked.push(node);
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          return await answer(node);
        } finally {
          inFlight--;
        }
      },
    },
    events: {
      record: (_t, e) => {
        events.push(...e);
        return Promise.resolve();
      },
    },
    tasks: {
      removeFinalizer: (_ns, name) => {
        removed.push(name);
        return Promise.resolve(task([]));
      },
    },
  };
  return { deps, looked, events, removed, most: () => most };
}

test('finalizer: 7,000 made-up names in status cost no lookup; only marked nodes are read, the Warning names a few', async () => {
  const madeUp = Array.from({ length: 7000 }, (_, i) => `x${i}`);
  const others = Array.from({ length: 30 }, (_, i) => `other${i}`);
  const w = world(
    [state('mine', UID), state('unlisted-mine', UID), ...others.map((n) => state(n, 'uid-other'))],
    () => Promise.resolve('uncordoned'),
  );
  await finalizeTask(w.deps, task(['mine', ...madeUp, ...others]), log);
  assert.deepEqual(w.looked.sort(), ['mine', 'unlisted-mine'], 'marked nodes only, listed in status or not');
  assert.deepEqual(w.removed, ['web']);
  const refused = w.events.find((e) => e.reason === 'UncordonRefused');
  assert.ok(refused);
  assert.match(
    refused.note,
    new RegExp(`left ${others.slice(0, NOTE_NAMES).join(', ')} and ${30 - NOTE_NAMES} more as they are`),
  );
  assert.doesNotMatch(refused.note, /x\d/, 'names the node view does not know are not named');
  assert.match(w.events.find((e) => e.reason === 'Uncordoned')?.note ?? '', /uncordoned mine, unlisted-mine/);
});

test('finalizer: marked nodes are read FINALIZE_CONCURRENCY at a time; a node whose live mark is not its own is left', async () => {
  const marked = Array.from({ length: 12 }, (_, i) => `m${i}`);
  const w = world(
    marked.map((n) => state(n, UID)),
    async (node) => {
      await new Promise((r) => setImmediate(r));
      return node === 'm3' ? 'notOwned' : 'uncordoned';
    },
  );
  await finalizeTask(w.deps, task([]), log);
  assert.equal(w.looked.length, 12);
  assert.ok(w.most() <= FINALIZE_CONCURRENCY, `${w.most()} in flight`);
  assert.match(w.events.find((e) => e.reason === 'UncordonRefused')?.note ?? '', /left m3 as they are/);
});

test('finalizer: a failing uncordon keeps the finalizer (the reconcile retries)', async () => {
  const w = world([state('mine', UID)], () => Promise.reject(new Error('apiserver said 500')));
  await assert.rejects(finalizeTask(w.deps, task(['mine']), log), /500/);
  assert.deepEqual(w.removed, []);
});
