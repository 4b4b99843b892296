// The shared test environment used by `npm test` and `npm run bench`: a real control
// plane from the harness, the conversion webhook running as its own process (the
// standalone entry point, as a user would run it), the AITask CRD installed with all
// versions served and conversion pointed at that webhook, and the operator's shipped
// identity (its ServiceAccount with the shipped RBAC, operator-identity.ts) that every
// test operator runs as.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { ensurePrometheus } from '../../scripts/lib/prometheus.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { installCRD } from '../../scripts/lib/crd-install.ts';
import { buildCRD } from '../../api/crd.ts';
import { installOperatorIdentity, OPERATOR_KUBECONFIG_ENV } from './operator-identity.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Environment {
  cluster: Cluster;
  /** URL of the conversion webhook's /convert. */
  webhookUrl: string;
  /** PEM of the CA that signed the webhook's certificate. */
  webhookCA: string;
  /** Env vars that test/support/cluster.ts and operator-identity.ts read. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Builds the binaries if the cache lacks them (Prometheus too when none is installed),
 * starts the cluster and webhook, installs the CRD. On any failure everything started so far
 * is stopped before rethrowing.
 */
export async function startEnvironment(log: (line: string) => void, keep = false): Promise<Environment> {
  log('building the control plane from Go modules if not cached');
  execFileSync(join(root, 'test/harness/build-control-plane.sh'), ['control-plane'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await ensurePrometheus(log);
  const cluster = await startCluster({ keep, log });
  let webhook: ChildProcess | undefined;
  const stop = async () => {
    webhook?.kill('SIGTERM');
    await cluster.stop();
  };
  try {
    log(`cluster up in ${cluster.startupMs} ms at ${cluster.server} (kubeconfig ${cluster.kubeconfigPath})`);
    const certs = createServingCert(join(cluster.dir, 'webhook-certs'));
    const [port = 0] = await freePorts(1);
    mkdirSync(join(cluster.dir, 'logs'), { recursive: true });
    const out = openSync(join(cluster.dir, 'logs', 'conversion-webhook.log'), 'a');
    webhook = spawn(
      process.execPath,
      [
        join(root, 'cmd/webhook.ts'),
        '--port',
        String(port),
        '--bind-address',
        '127.0.0.1',
        '--cert-dir',
        certs.dir,
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', out, out] },
    );
    const webhookUrl = `https://127.0.0.1:${port}/convert`;
    const transport = await KubeTransport.create({ kubeconfig: cluster.kubeconfigPath });
    const crd = buildCRD({
      conversion: { url: webhookUrl, caBundle: Buffer.from(certs.caPem).toString('base64') },
    });
    const ms = await installCRD(transport, crd);
    log(`AITask CRD installed and served in ${ms} ms; conversion webhook on :${port}`);
    const operatorKubeconfig = await installOperatorIdentity(transport, cluster.kubeconfigPath, cluster.dir);
    return {
      cluster,
      webhookUrl,
      webhookCA: certs.caPem,
      env: {
        AIOPS_TEST_KUBECONFIG: cluster.kubeconfigPath,
        AIOPS_TEST_WEBHOOK_URL: webhookUrl,
        AIOPS_TEST_WEBHOOK_CA: certs.caPem,
        [OPERATOR_KUBECONFIG_ENV]: operatorKubeconfig,
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
