// Which mounts a real node may sweep as a killed run's leftovers: only those under another
// harness cluster's node dir in the tmp dir, never its own, never anything else.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leftoverNodeMounts } from './host-state.ts';

test('leftoverNodeMounts: table', () => {
  const own = '/tmp/aiops-cluster-mine/node';
  const cases: [string, boolean, string][] = [
    ['/tmp/aiops-cluster-old/node/kubelet', true, "a killed run's kubelet dir"],
    ['/tmp/aiops-cluster-old/node/kubelet/pods/u/volumes/kubernetes.io~secret/cert', true, 'a secret volume'],
    ['/tmp/aiops-cluster-mine/node/kubelet', false, 'this run’s own node'],
    ['/tmp/aiops-cluster-mine/node', false, 'this run’s node dir itself'],
    ['/tmp/aiops-cluster-old/etcd', false, 'not a node dir'],
    ['/tmp/aiops-cluster-old/nodes/x', false, 'a look-alike dir'],
    ['/tmp/other/node/kubelet', false, 'not a harness cluster dir'],
    ['/var/lib/kubelet', false, 'outside the tmp dir'],
    ['/tmpx/aiops-cluster-old/node/kubelet', false, 'a look-alike tmp dir'],
  ];
  const mounts = cases.map(([m]) => m);
  const want = cases.filter(([, w]) => w).map(([m]) => m);
  assert.deepEqual(leftoverNodeMounts(mounts, '/tmp', own), want);
  assert.deepEqual(leftoverNodeMounts(mounts, '/tmp/', own), want, 'a tmp dir with a trailing slash');
});
