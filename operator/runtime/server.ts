// The operator's HTTP endpoints: /healthz (the process is serving), /readyz (the caches
// have synced), /metrics (Prometheus text format). Plain, they are served on the metrics
// port and the health-probe port (one listener when they are equal). Secure (the default
// of `--metrics-secure`, as kubebuilder scaffolds it), /metrics is served over HTTPS on its
// own port, only to bearer tokens the cluster authorizes (metrics-auth.ts), and the
// health-probe port serves the probes alone. Every listener holds its connections to
// DEFAULT_CONNECTION_BUDGET (lib/connection-budget.ts): deadlines of seconds for the TLS
// handshake and the request, and a share per remote address within a total, so a pod holding
// connections open leaves the kubelet's probes and the scraper served.

import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import {
  budgetConnections,
  DEFAULT_CONNECTION_BUDGET,
  listenerOptions,
} from '../../lib/connection-budget.ts';
import type { MetricsAccess } from './metrics-auth.ts';

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

/** A certificate and key in PEM. */
export interface CertPair {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/** /metrics over HTTPS for authorized tokens only. */
export interface SecureMetrics {
  /** The serving certificate now. */
  readonly pair: CertPair;
  /** Calls `apply` with each new pair (a rotated certificate); returns how to stop watching. Default: none. */
  readonly watch?: (apply: (pair: CertPair) => void) => () => void;
  /** Who may read /metrics (metrics-auth.ts); `remote` is the peer's IP address, which reviews are paced by. */
  readonly authorize: (
    authorization: string | undefined,
    method: string,
    path: string,
    remote: string,
  ) => Promise<MetricsAccess>;
}

/** Which endpoints a listener serves. */
type Serves = 'all' | 'probes' | 'metrics';

function handler(p: Probes, serves: Serves, secure?: SecureMetrics): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const send = (code: number, type: string, body: string): void => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    const metrics = (): void => {
      p.registry.metrics().then(
        (text) => send(200, p.registry.contentType, text),
        (err: unknown) => send(500, 'text/plain', `${(err as Error).message}\n`),
      );
    };
    if (serves !== 'metrics' && path === '/healthz') send(200, 'text/plain', 'ok\n');
    else if (serves !== 'metrics' && path === '/readyz') {
      if (p.ready()) send(200, 'text/plain', 'ok\n');
      else send(503, 'text/plain', 'caches not synced\n');
    } else if (serves === 'all' && path === '/metrics') metrics();
    else if (serves === 'metrics' && path === '/metrics' && secure !== undefined)
      secure
        .authorize(req.headers.authorization, req.method ?? 'GET', path, req.socket.remoteAddress ?? '')
        .then(
          (access) => (access.allowed ? metrics() : send(access.code, 'text/plain', `${access.message}\n`)),
          (err: unknown) => send(500, 'text/plain', `${(err as Error).message}\n`),
        );
    else if (serves === 'probes')
      send(
        404,
        'text/plain',
        'not found: try /healthz or /readyz (/metrics is served over HTTPS on the metrics port)\n',
      );
    else if (serves === 'metrics') send(404, 'text/plain', 'not found: try /metrics\n');
    else send(404, 'text/plain', 'not found: try /healthz, /readyz or /metrics\n');
  };
}

function listen(server: http.Server | https.Server, host: string, port: number): Promise<number> {
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

/**
 * Starts the endpoints; plain, one listener when both name the same non-zero port and host.
 * With `secure`, /metrics is served over HTTPS alone on its port, which then may not be the
 * health port. Rejects if a port is taken.
 */
export async function startServers(
  p: Probes,
  metrics: Listen,
  health: Listen,
  secure?: SecureMetrics,
): Promise<Servers> {
  const shared = health.port === metrics.port && health.host === metrics.host && metrics.port !== 0;
  if (secure !== undefined && shared)
    throw new Error(
      `/metrics over HTTPS needs a port of its own: the metrics and health ports are both ${metrics.port}`,
    );
  const servers: (http.Server | https.Server)[] = [];
  const stops: (() => void)[] = [];
  const start = async (at: Listen, serves: Serves): Promise<number> => {
    const budget = listenerOptions(DEFAULT_CONNECTION_BUDGET);
    let s: http.Server | https.Server;
    if (serves === 'metrics' && secure !== undefined) {
      const tlsServer = https.createServer(
        { ...secure.pair, ...budget, minVersion: 'TLSv1.2' },
        handler(p, serves, secure),
      );
      stops.push(secure.watch?.((pair) => tlsServer.setSecureContext({ ...pair })) ?? (() => undefined));
      s = tlsServer;
    } else s = http.createServer(budget, handler(p, serves));
    budgetConnections(s, DEFAULT_CONNECTION_BUDGET);
    servers.push(s);
    return listen(s, at.host, at.port);
  };
  const m = await start(metrics, secure === undefined ? 'all' : 'metrics');
  const h = shared ? m : await start(health, secure === undefined ? 'all' : 'probes');
  return {
    metricsPort: m,
    healthPort: h,
    close: () => {
      for (const stop of stops) stop();
      return Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      ).then(() => undefined);
    },
  };
}
