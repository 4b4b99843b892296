// Integration tests of `kubectl aiops`: every command and output format through the real
// kubectl binary (plugin discovery) against the shared harness cluster, plus a second,
// CRD-less cluster and an unreachable server for the error paths. Status, Events, Leases
// and ControllerRevisions are written directly, so no operator needs to run.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ResourceClient } from '../lib/kube/resources.ts';
import type { Condition } from '../api/schema/common.ts';
import type * as v2 from '../api/schema/v2.ts';
import { startCluster } from '../test/harness/cluster.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { deployment, statefulSet } from '../test/support/workloads.ts';
import { eventually } from '../test/harness/wait.ts';
import { Resources, type StatefulSetLike } from './kinds.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';

const ESC = '\u001b';
let PATH = '';
let KC = '';
const run = (args: readonly string[], env: Record<string, string> = {}): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC, ...env });
const NOW = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const cond = (type: string, status: 'True' | 'False', reason: string, message = reason): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: NOW,
});

function task(name: string, ns: string, spec: Partial<v2.Spec> = {}, finalizers?: string[]): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, namespace: ns, ...(finalizers ? { finalizers } : {}) },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8, forSeconds: 60 },
      remediation: { action: 'ScaleUp', cooldownSeconds: 600 },
      ...spec,
    },
  };
}

async function create(t: v2.AITask, status?: v2.Status): Promise<v2.AITask> {
  const c = await testAITasks('v2');
  const created = await c.create(t.metadata.namespace, t);
  return status ? c.patchStatus(t.metadata.namespace ?? '', t.metadata.name ?? '', status) : created;
}

const json = (r: KubectlResult): Record<string, unknown> => JSON.parse(r.stdout) as Record<string, unknown>;
const oneLine = (r: KubectlResult): void => assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

void describe('kubectl aiops: mechanics', () => {
  void test('--help lists every command with kubectl-prefixed usage and the exit codes', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: kubectl aiops/);
    for (const c of [
      'describe',
      'explain-phase',
      'force-finalize',
      'generation-diff',
      'version',
      'completion',
    ])
      assert.match(r.stdout, new RegExp(`\\n  ${c}`));
    assert.match(r.stdout, /Exit codes:/);
    for (const c of [
      'describe',
      'explain-phase',
      'force-finalize',
      'generation-diff',
      'version',
      'completion',
    ]) {
      const h = await run([c, '--help']);
      assert.equal(h.code, 0, c);
      assert.match(h.stdout, /Examples:\n {2}/, c);
    }
  });

  void test('bad usage exits 2 with one line on stderr', async () => {
    for (const args of [
      ['describe', 'x', '--bogus'],
      ['describe', '-o', 'xml'],
      ['describe', '--request-timeout', 'soon'],
      ['nosuch'],
      ['generation-diff', 'x', 'first'],
      ['describe', 'x', '-A'],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^error: /, args.join(' '));
    }
  });

  void test('version in every format, and --client without a server', async () => {
    const table = await run(['version']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /Plugin Version: +v\d+\.\d+\.\d+/);
    assert.match(table.stdout, /Server Version: +v1\./);
    assert.match(table.stdout, /AITask API: +aiops\.example\.com .*v2/);
    const j = json(await run(['version', '-o', 'json']));
    assert.ok((j['aitaskVersions'] as string[]).includes('v2'));
    assert.match((await run(['version', '-o', 'yaml'])).stdout, /^pluginVersion: v/m);
    const client = await run(['version', '--client'], { KUBECONFIG: '/nonexistent' });
    assert.equal(client.code, 0, client.stderr);
    assert.doesNotMatch(client.stdout, /Server Version/);
  });

  void test('completion through kubectl: commands, flags, flag values and AITask names', async (t) => {
    const ns = await freshNamespace('plugin-comp', (fn) => t.after(fn));
    await create(task('web-cpu', ns));
    const words = async (...args: string[]): Promise<string[]> =>
      (await kubectl(PATH, ['__complete', 'aiops', ...args], { KUBECONFIG: KC })).stdout
        .split('\n')
        .map((l) => l.split('\t')[0] ?? '');
    assert.ok((await words('expl')).includes('explain-phase'));
    assert.ok((await words('describe', '--all')).includes('--all-namespaces'));
    assert.deepEqual((await words('describe', '-o', '')).slice(0, 4), ['table', 'wide', 'json', 'yaml']);
    assert.ok((await words('-n', ns, 'describe', 'web')).includes('web-cpu'));
    assert.ok((await words('describe', '-n', 'plugin-comp')).includes(ns));
    const script = await run(['completion']);
    assert.match(script.stdout, /^#!\/bin\/sh\n[\s\S]*exec kubectl aiops __complete "\$@"/);
  });
});

void describe('kubectl aiops: errors name the object and the fix', () => {
  void test('not found, and found in another namespace', async (t) => {
    const ns = await freshNamespace('plugin-nf', (fn) => t.after(fn));
    const other = await freshNamespace('plugin-nf2', (fn) => t.after(fn));
    const unique = `${ns}-task`;
    await create(task(unique, ns));
    for (const cmd of ['describe', 'explain-phase', 'force-finalize', 'generation-diff']) {
      const r = await run([cmd, 'nope', '-n', ns]);
      assert.equal(r.code, 1, cmd);
      oneLine(r);
      assert.match(r.stderr, new RegExp(`^error: aitask "nope" not found in namespace "${ns}"`), cmd);
    }
    const wrong = await run(['describe', unique, '-n', other]);
    assert.equal(wrong.code, 1);
    oneLine(wrong);
    assert.match(
      wrong.stderr,
      new RegExp(
        `aitask "${unique}" not found in namespace "${other}"; it exists in namespace "${ns}": add -n ${ns}\\n$`,
      ),
    );
  });

  void test('unreachable server', async (t) => {
    const kc = join(tmpdir(), `aiops-unreachable-${process.pid}.kubeconfig`);
    writeFileSync(kc, readFileSync(KC, 'utf8').replace(/server: .*/, 'server: https://127.0.0.1:1'));
    t.after(() => rmSync(kc, { force: true }));
    const r = await run(['describe', 'x', '--kubeconfig', kc, '--request-timeout', '5s']);
    assert.equal(r.code, 1);
    oneLine(r);
    assert.match(
      r.stderr,
      /^error: cannot reach the apiserver at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED.*--kubeconfig/,
    );
    const ctx = await run(['describe', 'x', '--context', 'nosuch']);
    assert.equal(ctx.code, 1);
    assert.match(ctx.stderr, /context "nosuch" does not exist/);
  });

  void test('a cluster without the AITask CRD', async () => {
    const bare = await startCluster({ nodes: 0 });
    try {
      for (const args of [
        ['describe', 'web'],
        ['explain-phase', '-A'],
        ['generation-diff', 'web'],
        ['force-finalize', 'web'],
      ]) {
        const r = await run(args, { KUBECONFIG: bare.kubeconfigPath });
        assert.equal(r.code, 1, args.join(' '));
        oneLine(r);
        assert.match(
          r.stderr,
          /^error: the server https:\/\/127\.0\.0\.1:\d+ has no aitasks\.aiops\.example\.com CRD installed/,
          args.join(' '),
        );
      }
      const v = await run(['version'], { KUBECONFIG: bare.kubeconfigPath });
      assert.match(v.stdout, /AITask API: +not installed/);
    } finally {
      await bare.stop();
    }
  });
});

void describe('kubectl aiops describe / explain-phase: one object per phase', () => {
  const phases: {
    name: string;
    spec?: Partial<v2.Spec>;
    status?: v2.Status;
    kstatus: string;
    reason: RegExp;
    next: RegExp;
  }[] = [
    { name: 'pending', kstatus: 'InProgress', reason: /NotObserved/, next: /as soon as it sees it/ },
    {
      name: 'monitoring',
      status: {
        phase: 'Monitoring',
        observedGeneration: 1,
        conditions: [cond('Ready', 'True', 'Healthy', 'threshold 0.8 not breached')],
      },
      kstatus: 'Current',
      reason: /Healthy/,
      next: /within 60s/,
    },
    {
      name: 'healing',
      status: {
        phase: 'Healing',
        observedGeneration: 1,
        attempts: 1,
        conditions: [
          cond('Ready', 'False', 'ThresholdBreached'),
          cond('Reconciling', 'True', 'Remediating', 'running ScaleUp 2 → 3'),
        ],
        pendingDecision: {
          id: 'd-1',
          action: 'ScaleUp',
          source: 'rules',
          reason: 'metric 0.93 > 0.8',
          metricValue: 0.93,
          threshold: 0.8,
          at: NOW,
        },
      },
      kstatus: 'InProgress',
      reason: /Remediating/,
      next: /within 60s/,
    },
    {
      name: 'healed',
      status: {
        phase: 'Healed',
        observedGeneration: 1,
        lastExecutionTime: NOW,
        conditions: [
          cond('Ready', 'False', 'ThresholdBreached'),
          cond('RemediationAllowed', 'False', 'Cooldown', 'cooling down'),
        ],
        lastDecision: {
          id: 'd-2',
          action: 'ScaleUp',
          source: 'rules',
          reason: 'metric 0.9 > 0.8',
          executed: true,
          at: NOW,
        },
      },
      kstatus: 'InProgress',
      reason: /Cooldown/,
      next: /cooldown ends at/,
    },
    {
      name: 'failed',
      status: {
        phase: 'Failed',
        observedGeneration: 1,
        attempts: 3,
        conditions: [cond('Stalled', 'True', 'MaxAttemptsReached', '3 actions did not help')],
      },
      kstatus: 'Failed',
      reason: /MaxAttemptsReached/,
      next: /nothing happens until the target recovers/,
    },
    {
      name: 'paused',
      spec: { paused: true },
      status: {
        phase: 'Paused',
        observedGeneration: 1,
        conditions: [cond('Ready', 'False', 'Paused', 'spec.paused is true')],
      },
      kstatus: 'InProgress',
      reason: /Paused/,
      next: /until spec.paused is false/,
    },
    {
      name: 'awaiting',
      spec: { approval: 'Manual' },
      status: {
        phase: 'AwaitingApproval',
        observedGeneration: 1,
        conditions: [cond('RemediationAllowed', 'False', 'AwaitingApproval', 'ScaleUp waits for approval')],
      },
      kstatus: 'Current',
      reason: /AwaitingApproval/,
      next: /once it is approved/,
    },
  ];
  let ns = '';
  before(async () => {
    ns = await freshNamespace('plugin-phase', (fn) => after(fn));
    const deployments = new ResourceClient(await testTransport(), Resources.deployments);
    await deployments.create(ns, deployment('web', 1));
    for (const p of phases) await create(task(p.name, ns, p.spec ?? {}), p.status);
    const uid = (await (await testAITasks('v2')).get(ns, 'failed')).metadata.uid ?? '';
    await new ResourceClient(await testTransport(), Resources.coreEvents).create(ns, {
      metadata: { name: 'failed.stalled' },
      involvedObject: {
        apiVersion: 'aiops.example.com/v2',
        kind: 'AITask',
        name: 'failed',
        namespace: ns,
        uid,
      },
      reason: 'MaxAttemptsReached',
      message: 'gave up after 3 attempts',
      type: 'Warning',
      count: 2,
      firstTimestamp: NOW,
      lastTimestamp: NOW,
      source: { component: 'aiops-operator' },
    });
  });

  void test('explain-phase in table, json and yaml for each phase', async () => {
    for (const p of phases) {
      const text = await run(['explain-phase', p.name, '-n', ns]);
      assert.equal(text.code, 0, `${p.name}: ${text.stderr}`);
      assert.match(text.stdout, new RegExp(`aitask "${p.name}" in namespace "${ns}" is`), p.name);
      assert.match(text.stdout, p.reason, p.name);
      assert.match(text.stdout, p.next, p.name);
      const j = json(await run(['explain-phase', p.name, '-n', ns, '-o', 'json']));
      assert.equal((j['kstatus'] as { status: string }).status, p.kstatus, p.name);
      assert.match(JSON.stringify(j['causes']), p.reason, p.name);
      const y = await run(['explain-phase', p.name, '-n', ns, '-o', 'yaml']);
      assert.match(y.stdout, new RegExp(`^kstatus:\\n  status: ${p.kstatus}`, 'm'), p.name);
    }
  });

  void test('explain-phase lists the namespace (table, wide, -A, json)', async () => {
    const list = await run(['explain-phase', '-n', ns]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^NAME +PHASE +STATUS +REASON +NEXT/);
    for (const p of phases) assert.match(list.stdout, new RegExp(`\\n${p.name} `));
    assert.match(
      (await run(['explain-phase', '-n', ns, '-o', 'wide'])).stdout,
      /^NAME +PHASE +STATUS +REASON +GENERATION +OBSERVED +SINCE +MESSAGE +NEXT/,
    );
    const all = await run(['explain-phase', '-A']);
    assert.match(all.stdout, new RegExp(`\\n${ns} +failed +Failed +Failed +MaxAttemptsReached`));
    assert.equal(
      (json(await run(['explain-phase', '-n', ns, '-o', 'json']))['items'] as unknown[]).length,
      phases.length,
    );
  });

  void test('describe in table, wide, json and yaml', async () => {
    const r = await run(['describe', 'failed', '-n', ns]);
    assert.equal(r.code, 0, r.stderr);
    for (const re of [
      /^Name: +failed$/m,
      new RegExp(`^Target: +Deployment ${ns}/web \\(the AITask's namespace\\)`, 'm'),
      /^Phase: +Failed/m,
      /^Status: +Failed \(MaxAttemptsReached\)/m,
      /^Generation: +1, observed 1 \(in sync\)/m,
      /^Target Health: +Deployment .*\/web: \d\/1 ready/m,
      /^ {2}Stalled +True +MaxAttemptsReached/m,
      /^ {2}\S+ +Warning +MaxAttemptsReached +2 +gave up after 3 attempts/m,
    ])
      assert.match(r.stdout, re);
    assert.ok(!r.stdout.includes(ESC), 'no colour when stdout is not a terminal');
    const wide = await run(['describe', 'failed', '-n', ns, '-o', 'wide']);
    assert.match(wide.stdout, /LAST SEEN +TYPE +REASON +FIRST SEEN +FROM +COUNT +MESSAGE/);
    assert.match(wide.stdout, /aiops-operator/);
    const healing = json(await run(['describe', 'healing', '-n', ns, '-o', 'json']));
    assert.equal((healing['pendingDecision'] as { id: string }).id, 'd-1');
    assert.deepEqual(healing['targetHealth'] !== undefined, true);
    assert.equal((healing['events'] as unknown[]).length, 0);
    const y = await run(['describe', 'healed', '-n', ns, '-o', 'yaml']);
    assert.match(y.stdout, /^lastDecision:\n( {2}.*\n)* {2}id: d-2$/m);
    const all = json(await run(['describe', '-n', ns, '-o', 'json']));
    assert.equal((all['items'] as unknown[]).length, phases.length);
  });

  void test('colour only when asked and never with NO_COLOR', async () => {
    assert.ok(
      (await run(['describe', 'failed', '-n', ns, '--color', 'always'])).stdout.includes(`${ESC}[31mFailed`),
    );
    const noColor = await run(['describe', 'failed', '-n', ns, '--color', 'always'], { NO_COLOR: '1' });
    assert.ok(!noColor.stdout.includes(ESC));
  });
});

void describe('kubectl aiops describe: a StatefulSet target', () => {
  void test("shows its kind and its controller's replicas and rollout, rolled out and mid-update", async (t) => {
    const ns = await freshNamespace('plugin-sts', (fn) => t.after(fn));
    const sets = new ResourceClient<StatefulSetLike>(await testTransport(), Resources.statefulsets);
    await sets.create(ns, statefulSet('redis', 2));
    await create(
      task('redis-mem', ns, {
        target: { kind: 'StatefulSet', name: 'redis' },
        remediation: { action: 'RestartPod' },
      }),
    );
    const settled = (want: (s: StatefulSetLike['status'] & {}) => boolean) => async () => {
      const got = await sets.get(ns, 'redis');
      const st = got.status ?? {};
      return st.observedGeneration === got.metadata?.generation && want(st) ? st : undefined;
    };
    const done = await eventually(
      'StatefulSet redis: 2 pods ready at one revision',
      settled(
        (st) =>
          st.readyReplicas === 2 &&
          st.availableReplicas === 2 &&
          st.currentReplicas === 2 &&
          st.updatedReplicas === 2 &&
          st.currentRevision === st.updateRevision,
      ),
    );
    const r = await run(['describe', 'redis-mem', '-n', ns]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^Target: +StatefulSet ${ns}/redis \\(the AITask's namespace\\)$`, 'm'),
    );
    assert.match(
      r.stdout,
      new RegExp(
        `^Target Health: +StatefulSet ${ns}/redis: 2/2 ready, 2 current, 2 updated, 2 available; rollout complete: 2 pods at revision ${done.currentRevision ?? '?'}$`,
        'm',
      ),
    );

    // A new template whose pods no node can take: the controller replaces redis-1 first, and
    // the update stops there with the new pod Pending.
    await sets.patch(ns, 'redis', {
      spec: { template: { spec: { nodeSelector: { 'aiops.example.com/nowhere': 'true' } } } },
    });
    const mid = await eventually(
      'StatefulSet redis: redis-1 replaced by a pod of the new revision that stays Pending',
      settled(
        (st) =>
          st.updateRevision !== done.updateRevision &&
          st.updatedReplicas === 1 &&
          st.currentReplicas === 1 &&
          st.readyReplicas === 1 &&
          st.availableReplicas === 1 &&
          st.currentRevision === done.currentRevision,
      ),
    );
    const during = await run(['describe', 'redis-mem', '-n', ns]);
    assert.match(
      during.stdout,
      new RegExp(
        `^Target Health: +StatefulSet ${ns}/redis: 1/2 ready, 1 current, 1 updated, 1 available; rollout progressing: waiting for 1 of 2 pods to be ready$`,
        'm',
      ),
    );
    const health = json(await run(['describe', 'redis-mem', '-n', ns, '-o', 'json']))['targetHealth'];
    assert.deepEqual(health, {
      found: true,
      kind: 'StatefulSet',
      desired: 2,
      ready: 1,
      current: 1,
      updated: 1,
      available: 1,
      generation: 2,
      observedGeneration: 2,
      currentRevision: done.currentRevision,
      updateRevision: mid.updateRevision,
      rollout: { state: 'progressing', message: 'waiting for 1 of 2 pods to be ready' },
    });
  });
});
