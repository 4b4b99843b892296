// The operator's HTTP endpoints: /healthz (the process is serving), /readyz (the caches
// have synced), /metrics (Prometheus text format). Served on the metrics port and the
// health-probe port (one listener when they are equal).

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** What the endpoints report on. */
export interface Probes {
  readonly ready: () => boolean;
  readonly registry: Registry;
}

/** Listening servers and their bound ports (port 0 in options picks a free one). */
export interface Servers {
  readonly metricsPort: number;
  readonly healthPort: number;
  close(): Promise<void>;
}

function handler(p: Probes): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (code: number, type: string, body: string): void => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    if (path === '/healthz') send(200, 'text/plain', 'ok\n');
    else if (path === '/readyz') {
      if (p.ready()) send(200, 'text/plain', 'ok\n');
      else send(503, 'text/plain', 'caches not synced\n');
    } else if (path === '/metrics')
      p.registry.metrics().then(
        (text) => send(200, p.registry.contentType, text),
        (err: unknown) => send(500, 'text/plain', `${(err as Error).message}\n`),
      );
    else send(404, 'text/plain', 'not found: try /healthz, /readyz or /metrics\n');
  };
}

function listen(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Where one endpoint listens: `host` (an IP) and `port` (0: a free one). */
export interface Listen {
  readonly host: string;
  readonly port: number;
}

/** Starts the endpoints; one listener when both name the same non-zero port and host. Rejects if a port is taken. */
export async function startServers(p: Probes, metrics: Listen, health: Listen): Promise<Servers> {
  const servers: http.Server[] = [];
  const start = async (at: Listen): Promise<number> => {
    const s = http.createServer(handler(p));
    servers.push(s);
    return listen(s, at.host, at.port);
  };
  const m = await start(metrics);
  const shared = health.port === metrics.port && health.host === metrics.host && metrics.port !== 0;
  const h = shared ? m : await start(health);
  return {
    metricsPort: m,
    healthPort: h,
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      ).then(() => undefined),
  };
}
