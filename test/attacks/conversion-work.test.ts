// Attacks on the work the conversion webhook does and on what it signs, by anyone who reaches
// its port (mallory's pod, 127.0.0.2 here: an address of its own, apart from the apiserver's),
// against the operator hosting the webhook under the shipped memory limit and RBAC:
// - an 8 MB review whose object's status.conditions is millions of zeros, at each version:
//   answered (a Failure, or 429 once the address is over its conversion time), while the
//   operator stays up, alice's task is still reconciled and an honest conversion succeeds;
// - a stash the webhook signs for a spec of mallory's choosing (minReplicas 9 > maxReplicas 1),
//   written back at v1: what is stored at v2, and read at every version, keeps v2's rules;
// - malformed reviews once a second (no spec, another kind, not a ConversionReview, a version
//   not served): counted as malformed, and the failure series AIOpsConversionFailing reads
//   stays at 0;
// - eight pods (127.0.0.2-9) converting valid 1 MiB reviews back to back for 40 s: together
//   they take no more conversion time than the total allows (its burst, its rate over the
//   run, and the reviews in flight when it ran out), though each address alone may take 250
//   ms a second; they are refused (429), and meanwhile alice's writes and reads at v1, which
//   the apiserver converts, succeed.
// Mallory's posts after the first test are retried after a 429's Retry-After, as the
// apiserver's are: her address may still be paying back the time the test before took.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../../api/install.ts';
import {
  conversionReview,
  MINIMAL_SPECS,
  type ServedVersion,
  zerosReview,
} from '../support/conversion-reviews.ts';
import { httpsCall } from '../support/https-call.ts';
import {
  DEFAULT_CPU_TOTAL_BURST_MS,
  DEFAULT_CPU_TOTAL_MS_PER_SECOND,
} from '../../conversion-webhook/cpu-budget.ts';
import { DEFAULT_MAX_CONCURRENT_REVIEWS } from '../../conversion-webhook/server.ts';
import { eventually } from '../harness/wait.ts';
import { useStage } from './use-stage.ts';

const { stage, undisturbed } = useStage();

const G = 'aiops.example.com';
/** Mallory's pod: a loopback address other than the apiserver's. */
const MALLORY_POD = '127.0.0.2';

const post = (body: string) =>
  httpsCall(stage.webhook.port, '/convert', {
    ca: stage.webhook.ca,
    headers: { 'Content-Type': 'application/json' },
    body,
    localAddress: MALLORY_POD,
  });

/**
 * post, retried after the Retry-After of a 429 as the apiserver's client does (up to 10
 * times): mallory's address may still be paying back the conversion time of a test before.
 */
async function postRetried(body: string): Promise<Awaited<ReturnType<typeof post>>> {
  for (let attempt = 1; ; attempt++) {
    const res = await post(body);
    if (res.status !== 429 || attempt > 10) return res;
    await sleep(Number(res.headers['retry-after'] ?? '1') * 1000);
  }
}

/** A review of one object at `from` whose status.conditions is 4,000,000 zeros (~8 MB). */
const hostile = (from: ServedVersion, desired: string): string =>
  zerosReview({ uid: `hostile-${from}`, from, desired, namespace: 'mallory', zeros: 4_000_000 });

test('8 MB of zeros in status.conditions at each version: answered, the operator up, alice reconciled, honest conversions succeed', async () => {
  const s = stage;
  for (const [from, desired] of [
    ['v1alpha1', 'v2'],
    ['v1', 'v2'],
    ['v2', 'v1'],
  ] as const) {
    const body = hostile(from, desired);
    assert.ok(body.length > 8_000_000 && body.length <= 8 * 1024 * 1024, `${body.length} bytes`);
    const res = await post(body);
    if (res.status === 200) {
      assert.match(res.text, /"status":"Failure"/);
      assert.match(res.text, /holds more than \d+ values/);
    } else assert.equal(res.status, 429, res.text.slice(0, 200));
  }
  await undisturbed();
  const alice = await s.alice.tasksV1.list(s.alice.namespace);
  assert.equal(alice.items.length, 1, 'alice reads her task at v1 through the webhook');
});

test('a signed stash written back at v1 never stores or shows minReplicas above maxReplicas', async () => {
  const s = stage;
  const created = await s.mallory.tasksV1.create(s.mallory.namespace, {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: 'escape' },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'scale_up', intervalSeconds: 60 },
  });
  const uid = created.metadata.uid ?? '';
  const signed = await postRetried(
    conversionReview('sign-me', 'v1', [
      {
        apiVersion: `${G}/v2`,
        kind: 'AITask',
        metadata: { name: 'escape', namespace: s.mallory.namespace, uid },
        spec: {
          target: { kind: 'Deployment', name: 'web' },
          trigger: { threshold: 0.8 },
          remediation: { action: 'ScaleUp', scale: { minReplicas: 9, maxReplicas: 1 } },
          intervalSeconds: 60,
        },
      },
    ]),
  );
  assert.equal(signed.status, 200, signed.text.slice(0, 200));
  const answer = JSON.parse(signed.text) as {
    response: { convertedObjects?: { metadata: { annotations?: Record<string, string> } }[] };
  };
  const annotations = answer.response.convertedObjects?.[0]?.metadata.annotations ?? {};
  assert.ok(annotations[CONVERSION_MAC_ANNOTATION], 'the webhook signed the stash it was sent');
  const rejectedBefore = await s.operator.metric('aiops_conversion_stash_rejected_total', {
    reason: 'out_of_bounds',
  });
  await s.mallory.tasksV1.patch(s.mallory.namespace, 'escape', {
    metadata: {
      annotations: {
        [CONVERSION_ANNOTATION]: annotations[CONVERSION_ANNOTATION] ?? '',
        [CONVERSION_MAC_ANNOTATION]: annotations[CONVERSION_MAC_ANNOTATION] ?? '',
      },
    },
  });
  const stored = await s.adminTasks.v2.get(s.mallory.namespace, 'escape');
  const scale = stored.spec.remediation.scale;
  assert.ok(
    scale?.minReplicas === undefined ||
      scale.maxReplicas === undefined ||
      scale.minReplicas <= scale.maxReplicas,
    `stored at v2: ${JSON.stringify(scale)}`,
  );
  assert.ok(
    (await s.operator.metric('aiops_conversion_stash_rejected_total', { reason: 'out_of_bounds' })) >
      rejectedBefore,
    'the entry that breaks the rule was refused',
  );
  await s.adminTasks.v1.get(s.mallory.namespace, 'escape');
  await s.adminTasks.v1alpha1.get(s.mallory.namespace, 'escape');
  const reread = await s.mallory.tasks.get(s.mallory.namespace, 'escape');
  const again = reread.spec.remediation.scale;
  assert.ok(
    again?.minReplicas === undefined ||
      again.maxReplicas === undefined ||
      again.minReplicas <= again.maxReplicas,
    `read at v2: ${JSON.stringify(again)}`,
  );
  await undisturbed();
});

test('malformed reviews once a second are counted as malformed; the failure series the alert reads stays at 0', async () => {
  const s = stage;
  const failing = () => s.operator.metric('aiops_conversion_failures_total', { reason: 'conversion' });
  const malformedBefore = await s.operator.metric('aiops_conversion_failures_total', { reason: 'malformed' });
  const bodies = [
    conversionReview('no-spec', 'v2', [{ apiVersion: `${G}/v1`, kind: 'AITask', metadata: { name: 'x' } }]),
    conversionReview('pod', 'v2', [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: {} }]),
    JSON.stringify({ apiVersion: 'v1', kind: 'Status' }),
    conversionReview('unserved', 'v9', [
      { apiVersion: `${G}/v1`, kind: 'AITask', metadata: { name: 'x' }, spec: MINIMAL_SPECS.v1 },
    ]),
    conversionReview('unknown-from', 'v2', [
      { apiVersion: `${G}/v7`, kind: 'AITask', metadata: { name: 'x' }, spec: {} },
    ]),
  ];
  const rounds = 20;
  for (let i = 0; i < rounds; i++) {
    const body = bodies[i % bodies.length] ?? '';
    const res = await postRetried(body);
    assert.ok(res.status === 200 || res.status === 400, `answered ${res.status}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.ok(
    (await s.operator.metric('aiops_conversion_failures_total', { reason: 'malformed' })) >=
      malformedBefore + rounds,
    'each was counted as malformed',
  );
  assert.equal(await failing(), 0, 'no failed conversion was counted');
  await undisturbed();
});

test('eight addresses converting back to back take no more than the total; the apiserver still converts', async (t) => {
  const s = stage;
  const seconds = () => s.operator.metric('aiops_conversion_cpu_seconds_total');
  const objects = Array.from({ length: 5_300 }, (_, i) => ({
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: `pile-${i}`, namespace: 'mallory', uid: `pile-${i}` },
    spec: MINIMAL_SPECS.v1,
  }));
  const body = conversionReview('pile', 'v2', objects);
  assert.ok(body.length > 900_000 && body.length < 1_100_000, `${body.length} bytes`);
  const pods = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
  const spentBefore = await seconds();
  const started = Date.now();
  const ATTACK_MS = 40_000;
  const answers = new Map<number, number>();
  const attack = pods.map(async (localAddress) => {
    while (Date.now() - started < ATTACK_MS) {
      const res = await httpsCall(s.webhook.port, '/convert', {
        ca: s.webhook.ca,
        headers: { 'Content-Type': 'application/json' },
        body,
        localAddress,
      });
      answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
    }
  });
  await eventually('the pods are refused conversion time', () =>
    (answers.get(429) ?? 0) > 0 ? true : undefined,
  );
  await s.alice.tasksV1.create(s.alice.namespace, {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: 'beside-the-pile' },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'noop', intervalSeconds: 60 },
  });
  const read = await s.alice.tasksV1.get(s.alice.namespace, 'beside-the-pile');
  assert.equal(
    read.spec.threshold,
    0.8,
    'written and read at v1, converted by the webhook, during the attack',
  );
  await Promise.all(attack);
  const elapsed = (Date.now() - started) / 1000;
  const spent = (await seconds()) - spentBefore;
  // The reviews in flight when the total ran out were admitted before they were charged: at
  // most the concurrency cap, each (1 MiB, ~0.15 s) given a whole second here.
  const allowed =
    DEFAULT_CPU_TOTAL_BURST_MS / 1000 +
    (DEFAULT_CPU_TOTAL_MS_PER_SECOND / 1000) * elapsed +
    DEFAULT_MAX_CONCURRENT_REVIEWS;
  t.diagnostic(
    `${spent.toFixed(1)} s of conversion in ${elapsed.toFixed(1)} s (allowed ${allowed.toFixed(1)}); answers ${JSON.stringify([...answers])}`,
  );
  assert.ok(
    spent <= allowed,
    `${spent.toFixed(1)} s of conversion in ${elapsed.toFixed(0)} s; the total allows ${allowed.toFixed(1)} (answers ${JSON.stringify([...answers])})`,
  );
  assert.ok((answers.get(200) ?? 0) > 0, 'the pods converted within the total');
  assert.ok((answers.get(429) ?? 0) > 0, 'and were refused beyond it');
  await s.alice.tasksV1.delete(s.alice.namespace, 'beside-the-pile');
  await undisturbed();
});
