// The CSV's permissions, without OLM: the operator runs as a separate process with a token
// of a ServiceAccount that holds exactly the CSV's permissions and clusterPermissions (not
// admin) and passes its main scenario (create, breach, remediate, delete) without a single
// Forbidden; the same scenario with one CSV rule removed is refused by the apiserver, which
// proves the check can fail. This stays beside the real OLM install
// (test/real-node/olm-subscription.cluster.test.ts) for what OLM cannot do: install a CSV with a
// rule taken out; and it runs where no real node can (no root).

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '../../lib/kube/errors.ts';
import type { PolicyRule } from '../../api/rbac.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import { startExporter, startPrometheus } from '../../scripts/lib/prometheus.ts';
import { csvInstallSpec, installAsOLM } from './install-as-olm.ts';
import { ROOT } from './validators.ts';

const spec = csvInstallSpec();

/** Polls `check` every 250 ms until it returns a value, or fails naming `what` after `ms`. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Scenario {
  readonly appNs: string;
  readonly log: () => string;
  readonly replicas: () => Promise<number>;
}

/**
 * Installs as OLM would (rules edited by `edit`), starts Prometheus, a Deployment `web`
 * with 1 replica, an AITask scaling it up on a breached gauge, and the operator process
 * with the ServiceAccount's kubeconfig. Everything is removed when the test ends.
 */
async function startScenario(
  t: TestContext,
  edit?: (rules: PolicyRule[]) => PolicyRule[],
): Promise<Scenario> {
  const admin = await testTransport();
  const after = (fn: () => Promise<void>): void => {
    t.after(fn);
  };
  const installNs = await freshNamespace('olm-install', after);
  const appNs = await freshNamespace('olm-app', after);
  const dir = mkdtempSync(join(tmpdir(), 'aiops-install-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = await installAsOLM(admin, testKubeconfig(), installNs, spec, dir, after, edit);

  const exporter = await startExporter();
  after(() => exporter.close());
  const prometheus = await startPrometheus([exporter.address]);
  after(() => prometheus.stop());
  exporter.set('aiops_install_test_load', { namespace: appNs, app: 'web' }, 0.95);

  const deployments = `/apis/apps/v1/namespaces/${appNs}/deployments`;
  const labels = { app: 'web' };
  await admin.request({
    method: 'POST',
    path: deployments,
    body: {
      metadata: { name: 'web', labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1' }] },
        },
      },
    },
  });
  const tasks = await testAITasks('v2');
  await tasks.create(appNs, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'web-scale-on-load' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { query: 'max(aiops_install_test_load{app="web"})', threshold: 0.8, operator: 'GreaterThan' },
      remediation: {
        action: 'ScaleUp',
        scale: { step: 1, minReplicas: 1, maxReplicas: 3 },
        cooldownSeconds: 3600,
      },
      intervalSeconds: 10,
    },
  });

  let output = '';
  const operator = spawn(
    process.execPath,
    [
      join(ROOT, 'cmd/operator.ts'),
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${appNs}`,
      `--prometheus-url=${prometheus.url}`,
      '--leader-elect',
      `--leader-election-namespace=${installNs}`,
      '--metrics-port=0',
      '--health-port=0',
      '--bind-address=127.0.0.1',
      '--log-level=debug',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  operator.stdout.on('data', (b: Buffer) => (output += b.toString()));
  operator.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => operator.on('exit', () => resolve()));
  // Registered last, so it runs first: the operator stops before its namespaces go.
  after(async () => {
    operator.kill('SIGTERM');
    await exited;
  });
  return {
    appNs,
    log: () => output,
    replicas: async () =>
      (await admin.request<{ spec: { replicas: number } }>({ path: `${deployments}/web` })).spec.replicas,
  };
}

test('the operator with exactly the CSV permissions creates, remediates and deletes without Forbidden', async (t) => {
  const s = await startScenario(t);
  const tasks = await testAITasks('v2');
  await eventually('the breach to scale web up', async () => ((await s.replicas()) >= 2 ? true : undefined));
  const task = await eventually('status to record the executed decision', async () => {
    const got = await tasks.get(s.appNs, 'web-scale-on-load');
    return got.status?.lastDecision?.executed === true ? got : undefined;
  });
  assert.equal(task.status?.lastDecision?.action, 'ScaleUp');
  assert.ok(task.metadata.finalizers?.length, 'the operator put its finalizer on the task');

  await tasks.delete(s.appNs, 'web-scale-on-load');
  await eventually('the finalizer to release the deleted task', async () =>
    tasks.get(s.appNs, 'web-scale-on-load').then(
      () => undefined,
      (err: unknown) => (err instanceof NotFoundError ? true : Promise.reject(err as Error)),
    ),
  );
  assert.doesNotMatch(s.log(), /forbidden/i, 'no request of the operator was refused');
});

test('with one CSV rule removed (deployments/scale) the apiserver refuses the remediation', async (t) => {
  const withoutScale = (rules: PolicyRule[]): PolicyRule[] =>
    rules.filter((r) => !r.resources.includes('deployments/scale'));
  const s = await startScenario(t, withoutScale);
  const refused = /forbidden.*cannot \w+ resource .{0,2}deployments\/scale/i;
  await eventually('the apiserver to refuse the scale', () =>
    Promise.resolve(refused.test(s.log()) ? true : undefined),
  );
  assert.equal(await s.replicas(), 1);
});
