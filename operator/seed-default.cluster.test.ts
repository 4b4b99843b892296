// Integration: an AITask as the seed release left it after an upgrade. The seed's v1 schema
// filled an omitted `spec.namespace` with "default", so a task in namespace `shop` that
// never named a namespace is stored pointing at default/<name>. The operator must not act
// on namespace default: the task gets CrossNamespaceRefused with a message that names the
// seed default and what to change, and the Deployment in default is left alone.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { AITaskClient } from '../api/aitask-client.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { eventually } from '../test/support/operator.ts';
import { clients, metricsForFile, operatorFor, taskEvents } from '../test/support/remediation.ts';
import { deployment } from '../test/support/workloads.ts';

const metrics = metricsForFile();

test("a task carrying the seed's namespace default is refused with the reason, and default is untouched", async (t) => {
  const ns = await freshNamespace('seed-default', (fn) => t.after(fn));
  const name = `seed-web-${randomBytes(3).toString('hex')}`;
  const c = await clients();
  await c.deployments.create('default', deployment(name, 2));
  t.after(async () => {
    await c.deployments.delete('default', name);
  });
  const v1 = new AITaskClient(await testTransport(), 'v1');
  await v1.create(ns, {
    apiVersion: 'aiops.example.com/v1',
    kind: 'AITask',
    metadata: { name: 'legacy' },
    spec: {
      targetDeployment: name,
      namespace: 'default',
      threshold: 0,
      action: 'scale_up',
      intervalSeconds: 10,
    },
  });
  await operatorFor(ns, metrics.prometheus.url, t);
  const refused = await eventually('the CrossNamespaceRefused condition', async () => {
    const task = await c.tasks.get(ns, 'legacy');
    return task.status?.conditions?.find((x) => x.reason === 'CrossNamespaceRefused');
  });
  assert.match(refused.message, new RegExp(`Deployment default/${name} is in another namespace`));
  assert.match(refused.message, /seed release's default/);
  assert.match(refused.message, new RegExp(`to target Deployment ${ns}/${name}`));
  assert.equal((await c.deployments.get('default', name)).spec?.replicas, 2, 'default/ left alone');
  const actions = (await taskEvents(ns, 'legacy')).filter((e) => e.reason === 'ScaleUp');
  assert.deepEqual(actions, []);
});
