// The samples users apply first (config/samples/, used by `npm start`) are valid on the
// real apiserver in every version they are written in, and read back at v2.

import { kubectlWith } from '../harness/kubectl.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';

const samples = fileURLToPath(new URL('../../config/samples', import.meta.url));

test('config/samples apply cleanly and read back at v2', async (t) => {
  const run = kubectlWith(testKubeconfig());
  const kubectl = (...args: string[]): string => run(args);
  t.after(async () => {
    await (
      await testTransport()
    )
      .request({ method: 'DELETE', path: '/api/v1/namespaces/demo' })
      .catch(() => undefined);
  });
  const out = kubectl('apply', '-f', samples);
  assert.match(out, /aitask.aiops.example.com\/web-load created/);
  const tasks = await testAITasks('v2');
  const items = (await tasks.list('demo')).items.map((o) => [
    o.metadata.name,
    `${o.spec.target.kind}/${o.spec.target.name}`,
    o.spec.remediation.action,
  ]);
  assert.deepEqual(items.sort(), [
    ['api-record', 'Deployment/api', 'Noop'],
    ['batch-idle', 'StatefulSet/batch', 'ScaleDown'],
    ['cache-load', 'StatefulSet/cache', 'ScaleUp'],
    ['web-load', 'Deployment/web', 'ScaleUp'],
    ['worker-restart', 'Deployment/worker', 'RestartPod'],
  ]);
});
