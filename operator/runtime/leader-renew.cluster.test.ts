// Integration: what a leader's renewals cost the apiserver. As client-go's elector does, a
// leader renews the Lease it last wrote (one PUT bound to that write's resourceVersion) and
// reads the Lease only when that PUT fails because someone else wrote it since; then it
// renews from what it read and keeps leading. The elector's requests are counted by its
// transport; the Lease is read back from the real apiserver.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConflictError } from '../../lib/kube/errors.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KubeTransport, type RequestOptions } from '../../lib/kube/transport.ts';
import { createLogger } from '../../lib/log.ts';
import { eventually } from '../../test/harness/wait.ts';
import { freshNamespace, testTransport } from '../../test/support/cluster.ts';
import { OPERATOR_LEASE, operatorKubeconfig } from '../../test/support/operator-identity.ts';
import { Resources, type Lease } from './kinds.ts';
import { LeaderElector } from './leader.ts';

/** The transport of `kubeconfig`, recording the method of every request it sends. */
async function countingTransport(
  kubeconfig: string,
): Promise<{ transport: KubeTransport; methods: string[] }> {
  const transport = await KubeTransport.create({ kubeconfig });
  const methods: string[] = [];
  const send = transport.request.bind(transport);
  transport.request = <T>(opts: RequestOptions): Promise<T> => {
    methods.push(opts.method ?? 'GET');
    return send<T>(opts);
  };
  return { transport, methods };
}

test('a leader renews its Lease with one PUT each time, and reads it only after another writer changed it', async (t) => {
  const ns = await freshNamespace('leader-renew', (fn) => t.after(fn));
  const { transport, methods } = await countingTransport(await operatorKubeconfig(ns));
  const elector = new LeaderElector({
    leases: new ResourceClient<Lease>(transport, Resources.leases),
    namespace: ns,
    name: OPERATOR_LEASE,
    identity: 'renewing-leader',
    retryPeriodMs: 300,
    log: createLogger('leader-test', { level: 'error', write: () => undefined }),
  });
  t.after(() => elector.release());
  const admin = new ResourceClient<Lease>(await testTransport(), Resources.leases);
  await elector.acquire(() => undefined);
  const acquired = await admin.get(ns, OPERATOR_LEASE);
  const acquiring = methods.length;

  const since = (from: number, method: string): number =>
    methods.slice(from).filter((m) => m === method).length;
  await eventually('five renewals', () => (since(acquiring, 'PUT') >= 5 ? true : undefined));
  assert.equal(since(acquiring, 'GET'), 0, 'renewals read nothing');
  const renewed = await admin.get(ns, OPERATOR_LEASE);
  assert.equal(renewed.spec.holderIdentity, 'renewing-leader');
  assert.ok((renewed.spec.renewTime ?? '') > (acquired.spec.renewTime ?? ''), 'the Lease was renewed');
  assert.equal(elector.leading, true);

  // Another writer changes the Lease (a label; the record stays), so the leader's copy is stale.
  const touched = methods.length;
  const written = await eventually('a label on the Lease', async () => {
    const lease = await admin.get(ns, OPERATOR_LEASE);
    const labels = { ...lease.metadata.labels, 'aiops.example.com/touched': 'yes' };
    return admin
      .replace(ns, OPERATOR_LEASE, { ...lease, metadata: { ...lease.metadata, labels } })
      .catch((err: unknown) => {
        if (err instanceof ConflictError) return undefined;
        throw err;
      });
  });
  const after = await eventually('a renewal after the other write', async () => {
    const lease = await admin.get(ns, OPERATOR_LEASE);
    return (lease.spec.renewTime ?? '') > (written.spec.renewTime ?? '') ? lease : undefined;
  });
  assert.equal(after.spec.holderIdentity, 'renewing-leader', 'still the holder');
  assert.equal(after.spec.leaseTransitions, acquired.spec.leaseTransitions, 'no new term');
  assert.equal(after.metadata.labels?.['aiops.example.com/touched'], 'yes', 'renewed from the Lease as read');
  assert.ok(since(touched, 'GET') >= 1, 'the conflicting PUT made the leader read the Lease');
  assert.equal(elector.leading, true);

  // And from that read on, renewals are one PUT again.
  const reread = methods.length;
  await eventually('three more renewals', () => (since(reread, 'PUT') >= 3 ? true : undefined));
  assert.equal(since(reread, 'GET'), 0);
});
