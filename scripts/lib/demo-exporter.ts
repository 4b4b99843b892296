// The demo metric `npm start` feeds Prometheus: `demo_load`, the load of a demo workload (0..1),
// one gauge per workload a sample AITask watches. A user moves them with
// `curl -X POST 'localhost:<port>/load?value=0.95'` (web, the default) or
// `…/load?statefulset=batch&value=0.6` to watch the operator react.
import * as http from 'node:http';
import { StartupError } from './startup.ts';

/**
 * The workloads' gauges, by the label that names the workload, at their start values: web
 * serves its usual load (0.3, under web-load's and cache-load's 0.8); the batch workers sit
 * idle (0.05, under batch-idle's 0.2, so it scales them down to their minimum).
 */
const START: Readonly<Record<string, number>> = { 'deployment="web"': 0.3, 'statefulset="batch"': 0.05 };

/**
 * Serves GET /metrics and POST /load?value=N[&statefulset=NAME] on 127.0.0.1:`port`; a POST
 * without `statefulset` moves web's gauge. A port already in use rejects with a StartupError
 * naming AIOPS_DEMO_PORT.
 */
export function startDemoExporter(
  port: number,
  say: (msg: string) => void,
): Promise<{ close(): Promise<void> }> {
  const load = new Map(Object.entries(START));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/load') {
      const value = Number(url.searchParams.get('value'));
      const sts = url.searchParams.get('statefulset');
      const workload = sts === null ? 'deployment="web"' : `statefulset="${sts}"`;
      if (!Number.isFinite(value) || !load.has(workload)) {
        res
          .writeHead(400)
          .end('value must be a number, e.g. /load?value=0.95 or /load?statefulset=batch&value=0.6\n');
        return;
      }
      load.set(workload, value);
      say(`demo_load{${workload}} set to ${value}`);
      res.writeHead(200).end(`demo_load{${workload}} = ${value}\n`);
    } else if (url.pathname === '/metrics') {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(
        [
          '# HELP demo_load Demo load of a workload (0..1).',
          '# TYPE demo_load gauge',
          ...[...load].map(([workload, value]) => `demo_load{namespace="demo",${workload}} ${value}`),
        ].join('\n') + '\n',
      );
    } else {
      res.writeHead(404).end('GET /metrics or POST /load?value=N[&statefulset=batch]\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new StartupError(
              `port ${port} of the demo exporter is in use`,
              'set AIOPS_DEMO_PORT to a free port',
            )
          : err,
      ),
    );
    server.listen(port, '127.0.0.1', () =>
      resolve({
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      }),
    );
  });
}
