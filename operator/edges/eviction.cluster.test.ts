// Integration: RestartPod's eviction is bound to the UID of the pod chosen. A pod deleted and
// created again under the same name between the choice and the eviction is refused by the
// apiserver (409, UID precondition) and reported as not executed; the replacement stays.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshNamespace } from '../../test/support/cluster.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KindDiscovery } from '../../lib/kube/discovery.ts';
import { clients } from '../../test/support/remediation.ts';
import { Actions } from './actions.ts';
import { Resources, type Deployment, type Pod } from '../runtime/kinds.ts';

interface PodWithContainers extends Pod {
  spec: {
    nodeName?: string;
    nodeSelector: Record<string, string>;
    containers: { name: string; image: string }[];
  };
}

test('RestartPod: a pod replaced under the same name is not evicted (UID precondition, 409)', async (t) => {
  const ns = await freshNamespace('evict-uid', (fn) => t.after(fn));
  const c = await clients();
  const pods = new ResourceClient<PodWithContainers>(c.transport, Resources.pods);
  const pod = (): PodWithContainers => ({
    metadata: { name: 'web-0' },
    spec: {
      nodeSelector: { 'aiops.example.com/no-such-node': ns },
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
    },
  });
  // Never scheduled (no node matches), so the delete is immediate and the name is free again.
  const first = await pods.create(ns, pod());
  await pods.delete(ns, 'web-0');
  const replacement = await pods.create(ns, pod());
  const [stale = '', current = ''] = [first.metadata.uid, replacement.metadata.uid];
  assert.notEqual(stale, current);

  const actions = new Actions(c.transport, new KindDiscovery(c.transport));
  const target: Deployment = { metadata: { name: 'web', namespace: ns } };
  const refused = await actions.run({ action: 'RestartPod', pod: 'web-0', podUID: stale }, target);
  assert.deepEqual(
    { ...refused, message: '' },
    { executed: false, blockedBy: 'NoPodToRestart', message: '' },
  );
  assert.match(refused.message, /replaced/);
  assert.equal((await pods.get(ns, 'web-0')).metadata.uid, current, 'the replacement is still there');

  const evicted = await actions.run({ action: 'RestartPod', pod: 'web-0', podUID: current }, target);
  assert.equal(evicted.executed, true, evicted.message);
});
