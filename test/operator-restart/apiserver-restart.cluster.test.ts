// Integration: the kube-apiserver restarts while the operator runs. The operator must ride
// it out in the same process (watches fail, reconnect with backoff, relist on 410 Gone)
// and keep reconciling: a spec change and a new AITask made after the restart are both
// picked up. A cluster of its own, because restarting the shared one would break every
// other test file running in parallel.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AITaskClient } from '../../api/aitask-client.ts';
import { buildCRD } from '../../api/crd.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { Resources, type Deployment } from '../../operator/runtime/kinds.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { installCRD } from '../../scripts/lib/crd-install.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../support/operator.ts';
import { installOperatorIdentity } from '../support/operator-identity.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';

const GAUGE = 'aiops_test_load';
const NS = 'restart';

let cluster: Cluster;
let exporter: Exporter;
let prometheus: Prometheus;
let tasks: AITaskClient;
let operatorKubeconfig: string;
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  cluster = await startCluster();
  cleanups.push(() => cluster.stop());
  const transport = await KubeTransport.create({ kubeconfig: cluster.kubeconfigPath });
  await installCRD(transport, buildCRD({ served: ['v2'], versions: ['v2'], storage: 'v2' }));
  tasks = new AITaskClient(transport, 'v2');
  operatorKubeconfig = await installOperatorIdentity(transport, cluster.kubeconfigPath, cluster.dir);
  exporter = await startExporter();
  cleanups.push(() => exporter.close());
  exporter.set(GAUGE, { series: 'web' }, 0.1);
  prometheus = await startPrometheus([exporter.address]);
  cleanups.push(() => prometheus.stop());
  await eventually('Prometheus to scrape the exporter', async () =>
    (await prometheus.query(GAUGE)) === 0.1 ? true : undefined,
  );
  await new ResourceClient<{ metadata: { name: string } }>(transport, {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    namespaced: false,
  }).create(undefined, { metadata: { name: NS } });
  const deployments = new ResourceClient<Deployment>(transport, Resources.deployments);
  for (const name of ['before', 'after'])
    await deployments.create(NS, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image: 'nginx' }] },
        },
      },
    });
});
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** An AITask watching the Deployment of the same name (one AITask per target). */
function aitask(name: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name },
      trigger: { query: `${GAUGE}{series="web"}`, threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 600,
    },
  };
}

/** Waits until `name` has a phase and its status has observed `generation`; returns the object. */
function reconciled(name: string, generation: number): Promise<v2.AITask> {
  return eventually(
    `${name} reconciled at generation ${generation}`,
    async () => {
      const o = await tasks.get(NS, name);
      return o.metadata.generation === generation &&
        o.status?.observedGeneration === generation &&
        o.status.phase !== undefined
        ? o
        : undefined;
    },
    90_000,
  );
}

test('the operator recovers from an apiserver restart without restarting itself', async (t) => {
  const op: OperatorProcess = await startOperatorProcess(
    [`--namespace=${NS}`, `--prometheus-url=${prometheus.url}`],
    {},
    { kubeconfig: operatorKubeconfig },
  );
  t.after(async () => {
    await op.stop();
  });
  const pid = op.child.pid;
  await tasks.create(NS, aitask('before'));
  assert.equal((await reconciled('before', 1)).status?.phase, 'Monitoring');

  await cluster.restartApiserver({ downMs: 2000 });

  await tasks.patch(NS, 'before', { spec: { trigger: { threshold: 2 } } });
  await tasks.create(NS, aitask('after'));
  const [changed, created] = await Promise.all([reconciled('before', 2), reconciled('after', 1)]);
  assert.equal(changed.status?.phase, 'Monitoring');
  assert.equal(created.status?.phase, 'Monitoring');

  assert.equal(op.child.pid, pid);
  assert.equal(op.child.exitCode, null, 'the operator process is still running');
  const reconnects = op.logs.filter((l) => /^watch (failed, )?reconnecting$/.test(String(l['msg'])));
  assert.ok(reconnects.length > 0, 'the operator logged that its watches reconnect');
  assert.ok(
    reconnects.some((l) => l['resource'] === 'aitasks'),
    'the AITask watch itself reconnected',
  );
});
