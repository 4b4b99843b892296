// `npm test`: every test, on the real control plane. Builds the Kubernetes binaries if
// the cache lacks them, starts one shared cluster (etcd, kube-apiserver, controller-
// manager, scheduler, kwok), runs the conversion webhook as its own process, installs
// the AITask CRD (all versions served, conversion through that webhook), then runs all
// `*.test.ts` files with node:test and tears everything down, whatever the outcome.
//
// Usage: npm test [-- FILE...]   (default: every *.test.ts outside node_modules)
// Env:   AIOPS_TEST_CONCURRENCY (default 2 files at once), AIOPS_KEEP_CLUSTER=1 keeps the dir.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { globSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../test/harness/cluster.ts';
import { freePorts } from '../test/harness/ports.ts';
import { createServingCert } from '../test/support/certs.ts';
import { KubeTransport } from '../api/kube/transport.ts';
import { installCRD } from '../test/support/crd-install.ts';
import { buildCRD } from '../api/crd.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg: string) => process.stderr.write(`[test] ${msg}\n`);

const args = process.argv.slice(2);
const files = (
  args.length > 0
    ? args
    : globSync('**/*.test.ts', {
        cwd: root,
        exclude: (f) => f.includes('node_modules') || f.startsWith('dist'),
      })
)
  .map((f) => relative(root, join(root, f)))
  .sort();

say('building the control plane from Go modules if not cached');
execFileSync(join(root, 'test/harness/build-control-plane.sh'), ['all'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

const cluster = await startCluster({ keep: process.env['AIOPS_KEEP_CLUSTER'] === '1', log: (l) => say(l) });
let webhook: ChildProcess | undefined;
let code = 1;
try {
  say(`cluster up in ${cluster.startupMs} ms at ${cluster.server} (kubeconfig ${cluster.kubeconfigPath})`);
  const certs = createServingCert(join(cluster.dir, 'webhook-certs'));
  const [port = 0] = await freePorts(1);
  mkdirSync(join(cluster.dir, 'logs'), { recursive: true });
  const out = openSync(join(cluster.dir, 'logs', 'conversion-webhook.log'), 'a');
  webhook = spawn(
    process.execPath,
    [
      join(root, 'conversion-webhook/main.ts'),
      '--port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      '--cert-dir',
      certs.dir,
    ],
    {
      stdio: ['ignore', out, out],
    },
  );
  const transport = await KubeTransport.create({ kubeconfig: cluster.kubeconfigPath });
  const crd = buildCRD({
    conversion: {
      url: `https://127.0.0.1:${port}/convert`,
      caBundle: Buffer.from(certs.caPem).toString('base64'),
    },
  });
  const ms = await installCRD(transport, crd);
  say(`AITask CRD installed and served in ${ms} ms; conversion webhook on :${port}`);

  const concurrency = process.env['AIOPS_TEST_CONCURRENCY'] ?? '2';
  say(`running ${files.length} test files, ${concurrency} at a time`);
  const run = spawn(
    process.execPath,
    ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...files],
    {
      cwd: root,
      stdio: 'inherit',
      env: {
        ...process.env,
        AIOPS_TEST_KUBECONFIG: cluster.kubeconfigPath,
        AIOPS_TEST_WEBHOOK_URL: `https://127.0.0.1:${port}/convert`,
        AIOPS_TEST_WEBHOOK_CA: certs.caPem,
      },
    },
  );
  code = await new Promise<number>((resolve) => run.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
} catch (err) {
  say(`setup failed: ${(err as Error).message}`);
} finally {
  webhook?.kill('SIGTERM');
  await cluster.stop();
}
process.exit(code);
