// The operator started as a fresh install is, without a Prometheus URL: it runs (the webhook
// and every other tenant's reads depend on it), dials nothing, logs the missing setting once,
// and every AITask's MetricsAvailable condition says exactly what to set, in each install
// path's terms. Against the old default (http://localhost:9090) a task said only that
// Prometheus was unreachable at an address nobody had chosen.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCondition } from '../../api/status/conditions.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { freshNamespace } from '../support/cluster.ts';
import { eventually, startOperatorProcess } from '../support/operator.ts';
import { clients } from '../support/remediation.ts';
import { deployment } from '../support/workloads.ts';

test('without --prometheus-url, each AITask reports PrometheusNotConfigured and names the setting', async (t) => {
  const ns = await freshNamespace('noprom', (fn) => t.after(fn));
  const c = await clients();
  await c.deployments.create(ns, deployment('web', 1));
  const op = await startOperatorProcess([`--namespace=${ns}`], { AIOPS_PROMETHEUS_URL: '' });
  t.after(async () => {
    await op.stop();
  });
  await c.tasks.create(ns, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'web-cpu' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'vector(1)', threshold: 10 },
      remediation: { action: 'ScaleUp' },
    },
  } satisfies v2.AITask);
  const metrics = await eventually('MetricsAvailable on the task', async () => {
    const task = await c.tasks.get(ns, 'web-cpu');
    return findCondition(task.status?.conditions, 'MetricsAvailable');
  });
  assert.equal(metrics.status, 'False');
  assert.equal(metrics.reason, 'PrometheusNotConfigured');
  for (const phrase of [
    'AIOPS_PROMETHEUS_URL',
    'set env deployment/aiops-operator',
    'prometheus.url',
    'spec.config.env',
  ])
    assert.ok(metrics.message.includes(phrase), `the message names ${phrase}: ${metrics.message}`);
  const task = await c.tasks.get(ns, 'web-cpu');
  assert.equal(task.status?.phase, 'Monitoring', 'nothing is decided without a metric');
  const warned = op.logs.filter((l) => String(l['msg']).startsWith('no Prometheus URL'));
  assert.equal(warned.length, 1, 'the missing setting is logged once, at start');
});
