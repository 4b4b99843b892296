// Integration: the seed's first phase. A new AITask shows phase Pending as soon as the
// operator sees it, before its first evaluation ends: here Prometheus accepts the query's
// connection and never answers, so the evaluation waits out the query timeout (5 s) while
// the status already says Pending; then the evaluation reports the metric unavailable.

import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { findCondition } from '../api/status/conditions.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, operatorFor } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';
import { PENDING_MESSAGE } from './decision/first-sight.ts';

test('a new AITask is Pending on first sight, while its first evaluation is still under way', async (t) => {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });
  const address = silent.address();
  assert.ok(address !== null && typeof address === 'object');
  const ns = await freshNamespace('first-sight', (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 1));
  await operatorFor(ns, `http://127.0.0.1:${address.port}`, t);
  await c.tasks.create(ns, aitask('web', 'web', ns, { action: 'Noop' }));

  const pending = await eventually('phase Pending', async () => {
    const { status } = await c.tasks.get(ns, 'web');
    return status?.phase === 'Pending' ? status : undefined;
  });
  assert.equal(pending.message, PENDING_MESSAGE);
  assert.equal(pending.observedGeneration, undefined);
  assert.equal(findCondition(pending.conditions, 'Reconciling')?.status, 'True');
  // Pending is written before the query is sent; once Prometheus has the connection, the
  // evaluation waits out its timeout and the status must still say Pending.
  await eventually('the first evaluation to wait for Prometheus', () =>
    Promise.resolve(sockets.size > 0 ? true : undefined),
  );
  assert.equal((await c.tasks.get(ns, 'web')).status?.phase, 'Pending', 'still Pending while it waits');

  const evaluated = await eventually('the first evaluation to end', async () => {
    const { status } = await c.tasks.get(ns, 'web');
    return status !== undefined && status.phase !== 'Pending' ? status : undefined;
  });
  assert.equal(evaluated.phase, 'Monitoring');
  assert.equal(evaluated.observedGeneration, 1);
  assert.equal(findCondition(evaluated.conditions, 'MetricsAvailable')?.status, 'False');
});
