// The demo metric `npm start` feeds Prometheus: `demo_load{namespace="demo",deployment="web"}`,
// a gauge a user moves with `curl -X POST 'localhost:<port>/load?value=0.95'` to watch the
// operator react.
import * as http from 'node:http';
import { StartupError } from './startup.ts';

/**
 * Serves GET /metrics and POST /load?value=N on 127.0.0.1:`port` (the gauge starts at 0.3).
 * A port already in use rejects with a StartupError naming AIOPS_DEMO_PORT.
 */
export function startDemoExporter(
  port: number,
  say: (msg: string) => void,
): Promise<{ close(): Promise<void> }> {
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
