// Attacks that try to read across the tenant boundary through what the operator writes back
// into the tenant's own status and Events: another namespace's series through a PromQL
// comment, another namespace's Deployment through a forged in-flight decision, and the
// operator's Prometheus credentials through an error message. Played by mallory with her own
// token (status write included) against the operator under the CSV's RBAC.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metaTime } from '../../api/status/conditions.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { Resources, type KubeEvent } from '../../operator/runtime/kinds.ts';
import { eventually } from '../support/operator.ts';
import { deployment } from '../support/workloads.ts';
import { LOAD } from './stage.ts';
import { useStage } from './use-stage.ts';

/** Alice's value no read of mallory's may ever show. */
const SECRET_VALUE = 777;
const PASSWORD = 's3cret-pw';

const { stage, undisturbed } = useStage({
  prometheusUserinfo: `aiops:${PASSWORD}`,
  setup: async (s) => {
    s.exporter.set(LOAD, { namespace: s.alice.namespace, deployment: 'secret' }, SECRET_VALUE);
    for (const name of ['web', 'vault'])
      await s.mallory.deployments.create(s.mallory.namespace, deployment(name, 1));
  },
});

/** Everything mallory can read back about her task `name`: its status and its Events. */
async function whatMalloryReads(name: string): Promise<string> {
  const task = await stage.mallory.tasks.get(stage.mallory.namespace, name);
  const events = new ResourceClient<KubeEvent>(stage.admin, Resources.events);
  const notes = (await events.list(stage.mallory.namespace)).items
    .filter((e) => e.regarding.name === name)
    .map((e) => `${e.reason}: ${e.note}`);
  return JSON.stringify({ status: task.status, notes });
}

test("a comment in the matcher list cannot lift the namespace matcher: alice's series stays unread", async () => {
  const queries = [
    `max(${LOAD}{deployment="secret" #\n})`,
    `max(${LOAD}{deployment="secret", #\n})`,
    `max(${LOAD}{deployment="secret" # ,namespace="x"\n})`,
    `max(${LOAD} # {\n{deployment="secret"})`,
    `max(${LOAD}{deployment="secret"} # \r or ${LOAD}{deployment="secret"})`,
  ];
  await stage.mallory.tasks.create(stage.mallory.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'spy' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: `max(${LOAD}{deployment="web"})`, threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 10,
    },
  });
  for (const query of queries) {
    const patched = await stage.mallory.tasks.patch(stage.mallory.namespace, 'spy', {
      spec: { trigger: { query } },
    });
    await eventually(`spy evaluated with ${JSON.stringify(query)}`, async () => {
      const t = await stage.mallory.tasks.get(stage.mallory.namespace, 'spy');
      const metrics = t.status?.conditions?.find((c) => c.type === 'MetricsAvailable');
      return metrics?.observedGeneration === patched.metadata.generation ? true : undefined;
    });
    // A decision on the read value (threshold 1) would carry it into status and an Event.
    assert.doesNotMatch(
      await whatMalloryReads('spy'),
      new RegExp(String(SECRET_VALUE)),
      `${JSON.stringify(query)} read alice's series`,
    );
  }
  await undisturbed();
});

test("a forged in-flight decision on another namespace's Deployment tells nothing of it", async () => {
  const alicesReplicas = 1;
  for (const [name, replicas] of [
    ['peek-right', alicesReplicas],
    ['peek-wrong', 42],
  ] as const) {
    await stage.mallory.tasks.create(stage.mallory.namespace, {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name },
      spec: {
        target: { kind: 'Deployment', name: 'app', namespace: stage.alice.namespace },
        trigger: { threshold: 100_000 },
        remediation: { action: 'ScaleUp' },
        intervalSeconds: 10,
      },
    });
    await stage.mallory.tasks.patchStatus(stage.mallory.namespace, name, {
      phase: 'Healing',
      pendingDecision: {
        id: `${name}-1`,
        action: 'ScaleUp',
        source: 'rules',
        reason: 'forged',
        executed: false,
        at: metaTime(new Date()),
        effect: { replicas, fromReplicas: 0 },
      },
    });
  }
  const settled = async (name: string) =>
    eventually(`${name}'s forged decision settled`, async () => {
      const t = await stage.mallory.tasks.get(stage.mallory.namespace, name);
      return t.status?.pendingDecision === undefined && t.status?.lastDecision !== undefined ? t : undefined;
    });
  const right = await settled('peek-right');
  const wrong = await settled('peek-wrong');
  assert.notEqual(right.status?.lastDecision?.executed, true, 'the right guess is not confirmed');
  assert.equal(right.status?.lastDecision?.executed, wrong.status?.lastDecision?.executed);
  assert.equal(right.status?.lastDecision?.blockedBy, wrong.status?.lastDecision?.blockedBy);
  assert.doesNotMatch(await whatMalloryReads('peek-right'), /DecisionVerified/);
  await undisturbed();
});

test("Prometheus unreachable: mallory's status and Events never carry the operator's credentials", async () => {
  await stage.prometheus.stop();
  await stage.mallory.tasks.create(stage.mallory.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'creds' },
    spec: {
      target: { kind: 'Deployment', name: 'vault' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 10,
    },
  });
  const reason = await eventually('creds to report the metrics unavailable', async () => {
    const t = await stage.mallory.tasks.get(stage.mallory.namespace, 'creds');
    const c = t.status?.conditions?.find((x) => x.type === 'MetricsAvailable' && x.status === 'False');
    return c ? `${c.reason}: ${c.message}` : undefined;
  });
  assert.match(reason, /127\.0\.0\.1/, 'the message still says where Prometheus is');
  assert.doesNotMatch(await whatMalloryReads('creds'), new RegExp(PASSWORD));
  await undisturbed();
});
