// Conversion through the real apiserver and the real webhook (installed by the test
// runner): objects created in each version read back correctly in every version, v2-only
// fields survive read-modify-write through older versions, status written through one
// version reads through the others, and kubectl addresses each version.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { freshNamespace, testAITasks, testKubeconfig } from '../support/cluster.ts';
import { CONVERSION_ANNOTATION } from '../../api/install.ts';

const G = 'aiops.example.com';

test('an object created in each version reads back correctly in every version', async (t) => {
  const ns = await freshNamespace('conv-read', t.after.bind(t));
  const [a, b, c] = [await testAITasks('v1alpha1'), await testAITasks('v1'), await testAITasks('v2')];
  await a.create(ns, {
    apiVersion: `${G}/v1alpha1`,
    kind: 'AITask',
    metadata: { name: 'from-alpha' },
    spec: { target: 'shop/web', threshold: 75, action: 'RestartPod', interval: '2m' },
  });
  await b.create(ns, {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: { name: 'from-v1' },
    spec: {
      targetDeployment: 'web',
      threshold: 0.25,
      action: 'scale_down',
      intervalSeconds: 30,
      llmEndpoint: 'https://llm.example.com/v1/chat/completions',
    },
  });
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { name: 'from-v2' },
    spec: {
      target: { kind: 'Deployment', name: 'api', namespace: ns },
      trigger: { threshold: 0.5, operator: 'LessThan', forSeconds: 30 },
      remediation: { action: 'ScaleUp', scale: { maxReplicas: 4 } },
      dryRun: true,
    },
  });

  const alpha = await c.get(ns, 'from-alpha');
  assert.deepEqual(alpha.spec, {
    target: { kind: 'Deployment', name: 'web', namespace: 'shop' },
    trigger: { threshold: 0.75 },
    remediation: { action: 'RestartPod' },
    intervalSeconds: 120,
  });
  assert.deepEqual((await b.get(ns, 'from-alpha')).spec, {
    targetDeployment: 'web',
    namespace: 'shop',
    threshold: 0.75,
    action: 'restart_pod',
    intervalSeconds: 120,
  });
  assert.deepEqual((await a.get(ns, 'from-alpha')).spec, {
    target: 'shop/web',
    threshold: 75,
    action: 'RestartPod',
    interval: '2m',
  });

  assert.deepEqual((await a.get(ns, 'from-v1')).spec, {
    target: 'web',
    threshold: 25,
    action: 'ScaleDown',
    interval: '30s',
    llmEndpoint: 'https://llm.example.com/v1/chat/completions',
  });
  assert.deepEqual((await c.get(ns, 'from-v1')).spec.decision, {
    mode: 'LLM',
    llm: { endpoint: 'https://llm.example.com/v1/chat/completions' },
  });

  const v2asV1 = await b.get(ns, 'from-v2');
  assert.deepEqual(v2asV1.spec, {
    targetDeployment: 'api',
    namespace: ns,
    threshold: 0.5,
    action: 'scale_up',
  });
  assert.ok(v2asV1.metadata.annotations?.[CONVERSION_ANNOTATION], 'v1 carries what it cannot express');
  assert.deepEqual((await a.get(ns, 'from-v2')).spec, {
    target: `${ns}/api`,
    threshold: 50,
    action: 'ScaleUp',
  });
});

test('v2-only fields survive updates made through v1alpha1 and v1', async (t) => {
  const ns = await freshNamespace('conv-rmw', t.after.bind(t));
  const [a, b, c] = [await testAITasks('v1alpha1'), await testAITasks('v1'), await testAITasks('v2')];
  const spec = {
    target: { kind: 'Deployment' as const, name: 'web' },
    trigger: {
      query: 'sum(rate(http_errors_total[1m]))',
      threshold: 0.05,
      operator: 'GreaterThan' as const,
      forSeconds: 60,
    },
    remediation: {
      action: 'ScaleUp' as const,
      scale: { step: 2, minReplicas: 1, maxReplicas: 8 },
      cooldownSeconds: 120,
      maxAttempts: 5,
    },
    decision: {
      mode: 'LLM' as const,
      llm: { endpoint: 'https://llm.example.com/v1/chat/completions', model: 'ops-7b', timeoutSeconds: 5 },
    },
    approval: 'Manual' as const,
    paused: true,
  };
  await c.create(ns, { apiVersion: `${G}/v2`, kind: 'AITask', metadata: { name: 'rich' }, spec });

  const old = await a.get(ns, 'rich');
  await a.replace(ns, 'rich', { ...old, spec: { ...old.spec, threshold: 10, interval: '5m' } });
  let now = await c.get(ns, 'rich');
  assert.equal(now.spec.trigger.threshold, 0.1, 'the threshold edited through v1alpha1 applies');
  assert.equal(now.spec.intervalSeconds, 300);
  assert.deepEqual(
    { ...now.spec, trigger: { ...now.spec.trigger, threshold: 0.05 } },
    { ...spec, intervalSeconds: 300 },
    'everything else is intact',
  );

  const mid = await b.get(ns, 'rich');
  await b.replace(ns, 'rich', { ...mid, spec: { ...mid.spec, action: 'scale_down' } });
  now = await c.get(ns, 'rich');
  assert.equal(now.spec.remediation.action, 'ScaleDown');
  assert.deepEqual(now.spec.remediation.scale, spec.remediation.scale);
  assert.deepEqual(now.spec.decision, spec.decision);
  assert.equal(now.spec.approval, 'Manual');
  assert.equal(now.spec.paused, true);
  assert.equal(now.spec.trigger.query, spec.trigger.query);
  assert.equal(now.metadata.annotations?.[CONVERSION_ANNOTATION], undefined, 'no stash left in storage');
});

test('status written through one version reads through the others', async (t) => {
  const ns = await freshNamespace('conv-status', t.after.bind(t));
  const [a, b, c] = [await testAITasks('v1alpha1'), await testAITasks('v1'), await testAITasks('v2')];
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { name: 's' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 1 },
      remediation: { action: 'Noop' },
    },
  });
  const at = '2026-11-29T10:00:00Z';
  await c.patchStatus(ns, 's', {
    phase: 'AwaitingApproval',
    message: 'waiting for approval',
    observedGeneration: 1,
    attempts: 1,
    lastDecision: {
      id: 'd-1',
      action: 'Noop',
      source: 'rules',
      reason: 'metric 2 > 1',
      metricValue: 2,
      threshold: 1,
      executed: false,
      blockedBy: 'Approval',
      at,
    },
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'AwaitingApproval',
        message: 'approve to act',
        lastTransitionTime: at,
        observedGeneration: 1,
      },
    ],
  });
  const v1 = await b.get(ns, 's');
  assert.equal(v1.status?.phase, 'Healing');
  assert.equal(v1.status.lastDecision, 'noop (rules, blocked by Approval): metric 2 > 1');
  assert.equal(v1.status.observedGeneration, 1);
  assert.equal(v1.status.conditions?.[0]?.reason, 'AwaitingApproval');
  assert.equal((await a.get(ns, 's')).status?.message, 'waiting for approval');

  await b.replaceStatus({ ...v1, status: { ...v1.status, phase: 'Healed', observedGeneration: 1 } });
  const back = await c.get(ns, 's');
  assert.equal(back.status?.phase, 'Healed', 'the phase written through v1 wins');
  assert.equal(back.status.lastDecision?.id, 'd-1', 'the structured decision survives a v1 status write');
  assert.equal(back.status.attempts, 1);

  await a.patchStatus(ns, 's', { phase: 'Monitoring', message: 'written by a v1alpha1 client' });
  assert.equal((await c.get(ns, 's')).status?.message, 'written by a v1alpha1 client');
});

test('kubectl reads each version by its fully qualified name', async (t) => {
  const ns = await freshNamespace('conv-kubectl', t.after.bind(t));
  const c = await testAITasks('v2');
  await c.create(ns, {
    apiVersion: `${G}/v2`,
    kind: 'AITask',
    metadata: { name: 'k' },
    spec: {
      target: { kind: 'Deployment', name: 'web', namespace: 'shop' },
      trigger: { threshold: 0.9 },
      remediation: { action: 'CordonNode' },
    },
  });
  const get = (resource: string, path: string) =>
    execFileSync(
      'kubectl',
      ['--kubeconfig', testKubeconfig(), '-n', ns, 'get', resource, 'k', '-o', `jsonpath={${path}}`],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
  assert.equal(get(`aitasks.v1alpha1.${G}`, '.spec.target'), 'shop/web');
  assert.equal(get(`aitasks.v1alpha1.${G}`, '.spec.threshold'), '90');
  assert.equal(get(`aitasks.v1.${G}`, '.spec.action'), 'cordon_node');
  assert.equal(get(`aitasks.v2.${G}`, '.spec.remediation.action'), 'CordonNode');
  assert.equal(get('at', '.apiVersion'), `${G}/v2`);
});
