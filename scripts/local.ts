// `npm start`: aiops on a local embedded cluster, the way a user would run it. Starts (or
// reuses) the persistent harness cluster (`npm run cluster -- up`), a real Prometheus
// scraping a small demo exporter, the operator process with the conversion webhook hosted
// in it, installs the CRD pointing at that webhook, applies config/samples/ with kubectl and
// lists the AITasks. Ctrl-C stops the operator, Prometheus and the exporter; the cluster
// keeps running until `npm run cluster -- down`.
//
// The demo metric: `demo_load{deployment="web"}`, 0.3 at start; change it with
//   curl -X POST 'localhost:9464/load?value=0.95'      (port: AIOPS_DEMO_PORT)

import { execFileSync, spawn } from 'node:child_process';
import * as http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCRD } from '../api/crd.ts';
import { KubeTransport } from '../api/kube/transport.ts';
import { freePorts } from '../test/harness/ports.ts';
import { createServingCert } from '../test/support/certs.ts';
import { installCRD } from '../test/support/crd-install.ts';
import { startPrometheus } from '../test/support/prometheus.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const say = (msg: string) => process.stderr.write(`[aiops] ${msg}\n`);
const demoPort = Number(process.env['AIOPS_DEMO_PORT'] ?? 9464);

function startDemoExporter(): Promise<http.Server> {
  let load = 0.3;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/load') {
      const value = Number(url.searchParams.get('value'));
      if (!Number.isFinite(value)) {
        res.writeHead(400).end('value must be a number, e.g. /load?value=0.95\n');
        return;
      }
      load = value;
      say(`demo_load set to ${value}`);
      res.writeHead(200).end(`demo_load{deployment="web"} = ${value}\n`);
    } else if (url.pathname === '/metrics') {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(
        `# HELP demo_load Demo load of a Deployment (0..1).\n# TYPE demo_load gauge\ndemo_load{namespace="demo",deployment="web"} ${load}\n`,
      );
    } else {
      res.writeHead(404).end('GET /metrics or POST /load?value=N\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(demoPort, '127.0.0.1', () => resolve(server));
  });
}

const clusterEnv = execFileSync(process.execPath, [join(root, 'test/harness/cli.ts'), 'up'], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
const kubeconfig = /KUBECONFIG=(\S+)/.exec(clusterEnv)?.[1]?.replace(/^['"]|['"]$/g, '');
if (kubeconfig === undefined) throw new Error(`cannot read the kubeconfig from: ${clusterEnv}`);

const exporter = await startDemoExporter();
const prometheus = await startPrometheus([`127.0.0.1:${demoPort}`]);
say(`Prometheus ${prometheus.url} scraping the demo exporter on :${demoPort}`);

const certs = createServingCert(join(root, 'node_modules/.cache/aiops-local-webhook'));
const [webhookPort = 0, metricsPort = 0, healthPort = 0] = await freePorts(3);
const operator = spawn(
  process.execPath,
  [
    join(root, 'manager/main.ts'),
    `--kubeconfig=${kubeconfig}`,
    `--prometheus-url=${prometheus.url}`,
    `--webhook-port=${webhookPort}`,
    `--webhook-cert-dir=${certs.dir}`,
    `--metrics-port=${metricsPort}`,
    `--health-port=${healthPort}`,
    '--bind-address=127.0.0.1',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);
const transport = await KubeTransport.create({ kubeconfig });
await installCRD(
  transport,
  buildCRD({
    conversion: {
      url: `https://127.0.0.1:${webhookPort}/convert`,
      caBundle: Buffer.from(certs.caPem).toString('base64'),
    },
  }),
);
say('CRD installed with all versions served through the operator-hosted webhook');

const kubectl = (...args: string[]) =>
  execFileSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
process.stdout.write(kubectl('apply', '-f', join(root, 'config/samples')));
await new Promise((r) => setTimeout(r, 5000));
process.stdout.write(`\n${kubectl('get', 'aitasks', '-n', 'demo')}\n`);
say(
  `operator metrics http://127.0.0.1:${metricsPort}/metrics, health http://127.0.0.1:${healthPort}/healthz`,
);
say(`in another shell: export KUBECONFIG=${kubeconfig}; kubectl get at -A -w`);
say(`push the demo metric over the threshold: curl -X POST 'localhost:${demoPort}/load?value=0.95'`);
say('Ctrl-C stops the operator; `npm run cluster -- down` stops the cluster');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  operator.kill('SIGTERM');
  await new Promise((r) => operator.once('exit', r));
  await prometheus.stop();
  exporter.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
operator.on('exit', (code) => {
  if (!stopping) {
    say(`the operator exited with code ${String(code)}`);
    void stop();
  }
});
