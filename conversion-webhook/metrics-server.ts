// The standalone webhook's (`npm run webhook`) /metrics: the webhook port serves none, as it
// has no authentication and anyone who reaches it could read or load it, so a standalone
// webhook serves its registry on a port of its own, plain HTTP, bound to loopback unless told
// otherwise. (The operator hosting the webhook serves the same series on its own /metrics,
// behind TokenReview and SubjectAccessReview.) Its connections are held to
// DEFAULT_CONNECTION_BUDGET (lib/connection-budget.ts), as the operator's own listeners.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { budgetConnections, DEFAULT_CONNECTION_BUDGET, listenerOptions } from '../lib/connection-budget.ts';

/** A listening metrics endpoint. */
export interface MetricsEndpoint {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves GET /metrics of `registry` on `host`:`port` (0: a free port); anything else is 404.
 * Connections are held to DEFAULT_CONNECTION_BUDGET: headers within 5 s, a request within
 * 10 s, 16 connections per remote address and 128 in all. Rejects when the port is taken.
 */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<MetricsEndpoint> {
  const server = http.createServer(listenerOptions(DEFAULT_CONNECTION_BUDGET), (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: try GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (err: unknown) =>
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${(err as Error).message}\n`),
    );
  });
  budgetConnections(server, DEFAULT_CONNECTION_BUDGET);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
