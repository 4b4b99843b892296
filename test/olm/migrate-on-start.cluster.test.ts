// `--migrate-storage-on-start` under the RBAC the operator ships with: the operator runs as
// a ServiceAccount holding exactly the committed CSV's permissions (installAsOLM), with the
// AITask CRD's status.storedVersions listing an old version as after an upgrade. With the
// shipped rules the migration trims storedVersions to the storage version and the operator
// keeps running; with the rule it needs for the CRD status removed, the operator exits 1
// with one line naming the refused request, and storedVersions is left as it was.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { PolicyRule } from '../../api/rbac.ts';
import { CRD_NAME } from '../../api/schema/common.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../support/cluster.ts';
import { eventually } from '../support/operator.ts';
import { csvInstallSpec, installAsOLM } from './install-as-olm.ts';
import { ROOT } from './validators.ts';

const spec = csvInstallSpec();
const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;

interface CRD {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
  status: { storedVersions: string[] };
}

async function storedVersions(): Promise<string[]> {
  return (await (await testTransport()).request<CRD>({ path: crdPath })).status.storedVersions;
}

/** Sets the CRD's status.storedVersions as an upgrade from a v1-storing release leaves it. */
async function setStoredVersions(versions: string[]): Promise<void> {
  const admin = await testTransport();
  const crd = await admin.request<CRD>({ path: crdPath });
  await admin.request({
    method: 'PUT',
    path: `${crdPath}/status`,
    body: { ...crd, status: { ...crd.status, storedVersions: versions } },
  });
}

interface Run {
  readonly output: () => string;
  readonly exitCode: () => number | null;
}

/** Installs as OLM would (rules edited by `edit`) and starts the operator with the flag as that ServiceAccount. */
async function startMigrating(t: TestContext, edit?: (rules: PolicyRule[]) => PolicyRule[]): Promise<Run> {
  const after = (fn: () => Promise<void>): void => {
    t.after(fn);
  };
  const installNs = await freshNamespace('migrate-install', after);
  const appNs = await freshNamespace('migrate-app', after);
  const dir = mkdtempSync(join(tmpdir(), 'aiops-migrate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = await installAsOLM(
    await testTransport(),
    testKubeconfig(),
    installNs,
    spec,
    dir,
    after,
    edit,
  );
  await (
    await testAITasks('v1')
  ).create(appNs, {
    apiVersion: 'aiops.example.com/v1',
    kind: 'AITask',
    metadata: { name: 'old' },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'scale_up' },
  });
  await setStoredVersions(['v1', 'v2']);
  let output = '';
  let code: number | null = null;
  const operator = spawn(
    process.execPath,
    [
      join(ROOT, 'cmd/operator.ts'),
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${appNs}`,
      '--prometheus-url=http://127.0.0.1:9',
      '--leader-elect',
      `--leader-election-namespace=${installNs}`,
      '--metrics-port=0',
      '--health-port=0',
      '--bind-address=127.0.0.1',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AIOPS_MIGRATE_STORAGE_ON_START: 'true' } },
  );
  operator.stdout.on('data', (b: Buffer) => (output += b.toString()));
  operator.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) =>
    operator.on('exit', (c) => {
      code = c;
      resolve();
    }),
  );
  // Registered last, so it runs first: the operator stops before its namespaces go.
  after(async () => {
    operator.kill('SIGTERM');
    await exited;
    await setStoredVersions(['v2']);
  });
  return { output: () => output, exitCode: () => code };
}

test('with the shipped RBAC, --migrate-storage-on-start trims storedVersions and the operator runs on', async (t) => {
  const run = await startMigrating(t);
  await eventually('the migration to trim storedVersions to v2', async () => {
    const v = await storedVersions();
    return v.length === 1 && v[0] === 'v2' ? true : undefined;
  });
  await eventually('the operator to log the migration done', () =>
    Promise.resolve(run.output().includes('storage migration done') ? true : undefined),
  );
  assert.equal(run.exitCode(), null, 'the operator is still running');
  assert.doesNotMatch(run.output(), /forbidden/i, 'no request of the migration was refused');
});

test('without the CRD status rule, --migrate-storage-on-start fails visibly: exit 1 with the refused request', async (t) => {
  const withoutCrdStatus = (rules: PolicyRule[]): PolicyRule[] =>
    rules.filter((r) => !r.resources.includes('customresourcedefinitions/status'));
  const run = await startMigrating(t, withoutCrdStatus);
  const code = await eventually('the operator to exit', () => Promise.resolve(run.exitCode() ?? undefined));
  assert.equal(code, 1);
  assert.match(
    run.output(),
    /--migrate-storage-on-start failed, stopping: .*customresourcedefinitions\/status/,
    'one line names the refused request',
  );
  assert.deepEqual(await storedVersions(), ['v1', 'v2'], 'storedVersions is left as it was');
});
