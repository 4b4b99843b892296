// Integration: the per-task guardrails end to end — dryRun, paused, manual approval through
// the annotation (stale approval ignored, a valid one executed once), one AITask per target,
// and crash safety (a decision left in flight is verified against the cluster, not repeated).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { APPROVE_ANNOTATION } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import { findCondition, metaTime } from '../api/status/conditions.ts';
import { freshNamespace } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { aitask, clients, operatorFor, metricsForFile, taskEvents } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';

const metrics = metricsForFile();

const scaleUp = { action: 'ScaleUp', scale: { maxReplicas: 3 }, cooldownSeconds: 3600 } as const;

async function setup(prefix: string, t: { after: (fn: () => Promise<void>) => void }) {
  const ns = await freshNamespace(prefix, (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 2));
  await metrics.set(ns, 5);
  const get = (name: string) => c.tasks.get(ns, name);
  const until = (what: string, name: string, check: (o: v2.AITask) => boolean, ms = 60_000) =>
    eventually(
      what,
      async () => {
        const o = await get(name);
        return check(o) ? o : undefined;
      },
      ms,
    );
  const replicas = async () => (await c.deployments.get(ns, 'web')).spec?.replicas;
  const reasons = async (name: string) => (await taskEvents(ns, name)).map((e) => e.reason);
  return { ns, c, until, replicas, reasons };
}

describe('guardrails on the harness', { concurrency: true }, () => {
  test('dryRun decides and reports, never acts; paused does not evaluate', async (t) => {
    const { ns, c, until, replicas, reasons } = await setup('guard-dry', t);
    await c.tasks.create(ns, aitask('dry', 'web', ns, scaleUp, { dryRun: true }));
    await operatorFor(ns, metrics.prometheus.url, t);
    const dry = await until('DryRun', 'dry', (o) => o.status?.lastDecision?.blockedBy === 'DryRun');
    assert.match(dry.status?.message ?? '', /dry run: would run ScaleUp 2 → 3/);
    assert.equal(findCondition(dry.status?.conditions, 'RemediationAllowed')?.reason, 'DryRun');
    await eventually('the DryRun Event (sent after the status write)', async () =>
      (await reasons('dry')).includes('DryRun') ? true : undefined,
    );
    await c.tasks.patch(ns, 'dry', { spec: { dryRun: false, paused: true } });
    const paused = await until('Paused', 'dry', (o) => o.status?.phase === 'Paused');
    assert.equal(paused.status?.observedGeneration, 2);
    assert.equal(await replicas(), 2, 'neither dryRun nor paused acted');
    assert.ok(!(await reasons('dry')).includes('ScaleUp'));
  });

  test('manual approval: waits with a pendingDecision; a stale approval is ignored, the right one runs once', async (t) => {
    const { ns, c, until, replicas, reasons } = await setup('guard-approve', t);
    await c.tasks.create(ns, aitask('manual', 'web', ns, scaleUp, { approval: 'Manual' }));
    await operatorFor(ns, metrics.prometheus.url, t);
    const waiting = await until('AwaitingApproval', 'manual', (o) => o.status?.phase === 'AwaitingApproval');
    const pending = waiting.status?.pendingDecision;
    assert.ok(pending);
    assert.equal(pending.blockedBy, 'AwaitingApproval');
    assert.deepEqual(pending.effect, { fromReplicas: 2, replicas: 3 });

    await c.tasks.patch(ns, 'manual', { metadata: { annotations: { [APPROVE_ANNOTATION]: 'not-the-id' } } });
    await eventually('the stale approval to be ignored and removed', async () => {
      const o = await c.tasks.get(ns, 'manual');
      return o.metadata.annotations?.[APPROVE_ANNOTATION] === undefined &&
        (await reasons('manual')).includes('ApprovalIgnored')
        ? true
        : undefined;
    });
    assert.equal(await replicas(), 2);
    assert.equal((await c.tasks.get(ns, 'manual')).status?.pendingDecision?.id, pending.id);

    await c.tasks.patch(ns, 'manual', { metadata: { annotations: { [APPROVE_ANNOTATION]: pending.id } } });
    const done = await until(
      'the approved decision to run and its annotation to be consumed',
      'manual',
      (o) =>
        o.status?.lastDecision?.id === pending.id &&
        o.status.lastDecision.executed === true &&
        o.metadata.annotations?.[APPROVE_ANNOTATION] === undefined,
    );
    assert.equal(done.status?.lastDecision?.executed, true);
    assert.equal(await replicas(), 3);
    await until(
      'cooldown after the approved action',
      'manual',
      (o) =>
        o.status?.lastDecision?.blockedBy === 'AtMaxReplicas' ||
        findCondition(o.status?.conditions, 'RemediationAllowed')?.reason === 'Cooldown',
      120_000,
    );
    assert.equal((await reasons('manual')).filter((r) => r === 'ScaleUp').length, 1, 'executed once');
  });

  test('one AITask per target: the second is refused with DuplicateTarget and takes over when the first goes', async (t) => {
    const { ns, c, until, replicas, reasons } = await setup('guard-dup', t);
    await c.tasks.create(ns, aitask('first', 'web', ns, { action: 'Noop' }));
    await new Promise((r) => setTimeout(r, 1100));
    await c.tasks.create(ns, aitask('second', 'web', ns, scaleUp));
    await operatorFor(ns, metrics.prometheus.url, t);
    const dup = await until('DuplicateTarget', 'second', (o) => o.status?.phase === 'Failed');
    const stalled = findCondition(dup.status?.conditions, 'Stalled');
    assert.ok(stalled);
    assert.equal(stalled.reason, 'DuplicateTarget');
    assert.match(stalled.message, new RegExp(`AITask ${ns}/first already watches Deployment ${ns}/web`));
    await eventually(`the DuplicateTarget Event of second`, async () =>
      (await reasons('second')).includes('DuplicateTarget') ? true : undefined,
    );
    assert.equal(await replicas(), 2, 'the duplicate never acts');
    await c.tasks.delete(ns, 'first');
    await until('second to take over', 'second', (o) => o.status?.lastDecision?.executed === true);
    assert.equal(await replicas(), 3);
  });

  test('crash safety: a decision found in effect is recorded, one not in effect runs once', async (t) => {
    const { ns, c, until, reasons } = await setup('guard-crash', t);
    await c.deployments.create(ns, deployment('done', 3));
    const inFlight = (id: string): v2.DecisionRecord => ({
      id,
      action: 'ScaleUp',
      source: 'rules',
      reason: 'threshold > 1 breached: ScaleUp 2 → 3',
      executed: false,
      at: metaTime(new Date()),
      effect: { fromReplicas: 2, replicas: 3 },
    });
    for (const [name, target] of [
      ['verified', 'done'],
      ['resumed', 'web'],
    ] as const) {
      const created = await c.tasks.create(ns, aitask(name, target, ns, scaleUp));
      await c.tasks.replaceStatus({
        ...created,
        status: {
          phase: 'Healing',
          observedGeneration: 1,
          attempts: 0,
          pendingDecision: inFlight(`${name}-1`),
        },
      });
    }
    await operatorFor(ns, metrics.prometheus.url, t);
    const verified = await until('verified', 'verified', (o) => o.status?.pendingDecision === undefined);
    const status = verified.status;
    assert.ok(status?.lastDecision);
    assert.equal(status.lastDecision.id, 'verified-1');
    assert.equal(status.lastDecision.executed, true);
    assert.equal(status.attempts, 1);
    await eventually(`the DecisionVerified Event of verified`, async () =>
      (await reasons('verified')).includes('DecisionVerified') ? true : undefined,
    );
    const resumed = await until('resumed', 'resumed', (o) => o.status?.lastDecision?.executed === true);
    assert.equal(resumed.status?.attempts, 1);
    await eventually(`the DecisionInterrupted Event of resumed`, async () =>
      (await reasons('resumed')).includes('DecisionInterrupted') ? true : undefined,
    );
    await eventually(
      'another evaluation of both',
      async () => {
        const [a, b] = await Promise.all([c.tasks.get(ns, 'verified'), c.tasks.get(ns, 'resumed')]);
        return findCondition(a.status?.conditions, 'RemediationAllowed')?.reason === 'Cooldown' &&
          findCondition(b.status?.conditions, 'RemediationAllowed')?.reason === 'Cooldown'
          ? true
          : undefined;
      },
      120_000,
    );
    assert.equal((await c.deployments.get(ns, 'done')).spec?.replicas, 3, 'not scaled a second time');
    assert.equal((await c.deployments.get(ns, 'web')).spec?.replicas, 3, 'scaled exactly once');
    assert.equal((await reasons('verified')).filter((r) => r === 'ScaleUp').length, 0);
    assert.equal((await reasons('resumed')).filter((r) => r === 'ScaleUp').length, 1);
  });
});
