// `npm start`: aiops on a local embedded cluster, the way a user would run it. Starts (or
// reuses) the persistent harness cluster (`npm run cluster -- up`), a real Prometheus
// scraping a small demo exporter (its loopback URL recorded in the cluster dir, so `npm run
// cluster -- env` exports it as AIOPS_PROMETHEUS_URL for kubectl aiops simulate:
// lib/start-record.ts), the operator process with the conversion webhook hosted in it; once
// the webhook answers it installs the CRD pointing at it, waits for the operator's /readyz,
// applies config/samples/ with kubectl and lists the AITasks.
//
// Every stage announces itself on stderr. A failure prints one line (what failed, how to
// fix it) and stops every process this command started; so do Ctrl-C, SIGTERM and SIGHUP
// at any stage. The cluster keeps running until `npm run cluster -- down`.
//
// The demo metric: `demo_load{deployment="web"}`, 0.3 at start, and the idle batch workers'
// `demo_load{statefulset="batch"}`, 0.05 (lib/demo-exporter.ts); change them with
//   curl -X POST 'localhost:9464/load?value=0.95'      (port: AIOPS_DEMO_PORT)
//   curl -X POST 'localhost:9464/load?statefulset=batch&value=0.6'

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildCRD } from '../api/crd.ts';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { AlreadyExistsError } from '../lib/kube/errors.ts';
import { KubeTransport } from '../lib/kube/transport.ts';
import { createServingCert } from './lib/certs.ts';
import { installCRD } from './lib/crd-install.ts';
import { startDemoExporter } from './lib/demo-exporter.ts';
import { freePorts } from './lib/ports.ts';
import { ensurePrometheus, startPrometheus } from './lib/prometheus.ts';
import { removeStartRecord, writeStartRecord } from './lib/start-record.ts';
import { waitForHttp, StartupError } from './lib/startup.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const say = (msg: string): void => void process.stderr.write(`[aiops] ${msg}\n`);
const run = promisify(execFile);

/** Something this command started and must stop before it exits. */
interface Running {
  readonly name: string;
  stop(): Promise<void>;
}
const started: Running[] = [];
let shuttingDown: Promise<never> | undefined;

/** Stops what was started, newest first, then exits with `code`. Idempotent. */
function shutdown(code: number): Promise<never> {
  shuttingDown ??= (async () => {
    for (const r of started.reverse()) await r.stop().catch(() => undefined);
    process.exit(code);
  })();
  return shuttingDown;
}
/** The exit code of a stopping signal (SIGINT 130, SIGTERM and SIGHUP 143); undefined for any other. */
const signalCode = (signal: unknown): number | undefined =>
  signal === 'SIGINT' ? 130 : signal === 'SIGTERM' || signal === 'SIGHUP' ? 143 : undefined;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(sig, () => {
    say(`${sig}: stopping what npm start started (the cluster keeps running)`);
    void shutdown(signalCode(sig) ?? 143);
  });

/** A child process as a Running: SIGTERM, SIGKILL after 10 s, resolved once it has exited. */
function childRunning(name: string, child: ChildProcess): Running {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    name,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `npm run cluster -- up` as a child (stopped on interrupt); resolves to the kubeconfig path. */
async function clusterUp(): Promise<string> {
  say('stage cluster: starting or reusing the local control plane (npm run cluster -- up)');
  const child = spawn(process.execPath, [join(root, 'test/harness/cli.ts'), 'up'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const running = childRunning('cluster up', child);
  started.push(running);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  started.splice(started.indexOf(running), 1);
  const kubeconfig = /KUBECONFIG=(\S+)/.exec(out)?.[1]?.replace(/^['"]|['"]$/g, '');
  if (code !== 0 || kubeconfig === undefined)
    throw new StartupError(
      'the local cluster did not start',
      'see the lines above; `npm run cluster -- down` then `npm start` retries from scratch',
    );
  return kubeconfig;
}

/**
 * The operator's own namespace, as an install creates it: the operator keeps its Lease and
 * the Secret with the key that signs the conversion stash there (conversion-webhook/hosted/conversion-key.ts), and
 * without that key no AITask that carries a field of another version reads at v1 or v1alpha1.
 * Already there (a second `npm start` on the same cluster) is fine: the key it holds stays.
 */
async function ensureOperatorNamespace(transport: KubeTransport): Promise<void> {
  const name = DEFAULT_INSTALL.namespace;
  await transport
    .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } })
    .catch((err: unknown) => {
      if (err instanceof AlreadyExistsError) return;
      throw new StartupError(
        `creating namespace ${name} failed: ${(err as Error).message}`,
        'check the cluster: npm run cluster -- status',
      );
    });
}

async function main(): Promise<void> {
  const kubeconfig = await clusterUp();

  const demoPort = Number(process.env['AIOPS_DEMO_PORT'] ?? 9464);
  say(`stage exporter: demo exporter on 127.0.0.1:${demoPort}`);
  const exporter = await startDemoExporter(demoPort, say);
  started.push({ name: 'demo exporter', stop: () => exporter.close() });

  say('stage prometheus: starting Prometheus');
  await ensurePrometheus(say);
  const prometheus = await startPrometheus([`127.0.0.1:${demoPort}`]);
  started.push({ name: 'Prometheus', stop: () => prometheus.stop() });
  say(`Prometheus ${prometheus.url} scraping the demo exporter on :${demoPort}`);
  const clusterDir = dirname(kubeconfig);
  writeStartRecord(clusterDir, prometheus.url);
  started.push({ name: 'cluster env record', stop: () => removeStartRecord(clusterDir) });

  say('stage operator: starting the operator with the conversion webhook in its process');
  const transport = await KubeTransport.create({ kubeconfig });
  await ensureOperatorNamespace(transport);
  const certs = createServingCert(join(root, 'node_modules/.cache/aiops-local-webhook'));
  const [webhookPort = 0, metricsPort = 0, healthPort = 0] = await freePorts(3);
  // prettier-ignore
  const operator = spawn(process.execPath, [
    join(root, 'cmd/operator.ts'),
    `--kubeconfig=${kubeconfig}`, `--prometheus-url=${prometheus.url}`,
    // No Service routes to it here, so it need not keep answering after SIGTERM.
    `--webhook-port=${webhookPort}`, `--webhook-cert-dir=${certs.dir}`, '--webhook-shutdown-delay=0',
    // Plain /metrics on loopback: a person curls it here, with no token to send.
    `--metrics-port=${metricsPort}`, '--metrics-secure=false', `--health-port=${healthPort}`, '--bind-address=127.0.0.1',
  ], { stdio: ['ignore', 'inherit', 'inherit'] });
  started.push(childRunning('operator', operator));
  const operatorExit = new Promise<never>((_, reject) =>
    operator.once('exit', (code, signal) =>
      reject(
        new StartupError(
          `the operator exited (${signal ?? `code ${String(code)}`})`,
          'its log is above; `npm run operator -- --help` lists its flags',
        ),
      ),
    ),
  );
  operatorExit.catch(() => undefined);
  const ready = (what: string, url: string, ca?: string): Promise<void> =>
    Promise.race([waitForHttp(url, { what, timeoutMs: 60_000, ...(ca ? { ca } : {}) }), operatorExit]);
  await ready('the conversion webhook', `https://127.0.0.1:${webhookPort}/healthz`, certs.caPem);

  say('stage crd: installing the AITask CRD with conversion through the operator-hosted webhook');
  await installCRD(
    transport,
    buildCRD({
      conversion: {
        url: `https://127.0.0.1:${webhookPort}/convert`,
        caBundle: Buffer.from(certs.caPem).toString('base64'),
      },
    }),
  ).catch((err: unknown) => {
    throw new StartupError(
      `installing the CRD failed: ${(err as Error).message}`,
      'check the cluster: npm run cluster -- status',
    );
  });
  await ready('the operator /readyz', `http://127.0.0.1:${healthPort}/readyz`);

  say('stage samples: kubectl apply -f config/samples');
  const kubectl = async (...args: string[]): Promise<string> => {
    try {
      return (await run('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { encoding: 'utf8' })).stdout;
    } catch (err) {
      const detail = ((err as { stderr?: string }).stderr ?? String(err)).trim().split('\n').at(-1);
      throw new StartupError(`kubectl ${args[0] ?? ''} failed: ${detail ?? ''}`, 'kubectl must be on PATH');
    }
  };
  process.stdout.write(await kubectl('apply', '-f', join(root, 'config/samples')));
  await new Promise((r) => setTimeout(r, 3000));
  process.stdout.write(`\n${await kubectl('get', 'aitasks', '-n', 'demo')}\n`);
  say(
    `running: operator metrics http://127.0.0.1:${metricsPort}/metrics, health http://127.0.0.1:${healthPort}/healthz`,
  );
  say(
    `in another shell: eval "$(npm run -s cluster -- env)" (KUBECONFIG=${kubeconfig}, AIOPS_PROMETHEUS_URL=${prometheus.url}); kubectl get at -A -w`,
  );
  say(`push the demo metric over the threshold: curl -X POST 'localhost:${demoPort}/load?value=0.95'`);
  say('Ctrl-C stops the operator, Prometheus and the exporter; `npm run cluster -- down` stops the cluster');
  await operatorExit;
}

main().catch((err: unknown) => {
  if (shuttingDown) return;
  // Ctrl-C reaches a child run synchronously (openssl) with this process: the child's death
  // surfaces here before the signal's handler runs. It is a stop, not a failure.
  const stopped = signalCode((err as { signal?: unknown } | undefined)?.signal);
  if (stopped !== undefined) {
    void shutdown(stopped);
    return;
  }
  if (err instanceof StartupError) say(`${err.message}; ${err.fix}`);
  else say(`failed: ${err instanceof Error ? err.message : String(err)}`);
  void shutdown(1);
});
