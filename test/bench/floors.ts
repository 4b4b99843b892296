// The floors of bench section `peer`: Node programs with none of the operator's code, started
// with the image's Node flags and environment as the operator is. The Node floor is an idle
// HTTP server, the TLS floor an idle HTTPS server and client (for idle memory); the start
// floor is the least any Node operator does before its /readyz may answer 200. It reads its client credentials
// from files (as a pod reads its token and CA, not parsing a kubeconfig), serves /healthz and
// /readyz and /metrics over HTTP and the conversion webhook over HTTPS with the bench's
// certificate, and sends the requests the operator's /readyz waits on (the AITask and
// Deployment LISTs, the Lease and the conversion key's Secret) over one keep-alive TLS agent,
// all at once; /readyz answers 200 once the four have answered. Timed like the operator (spawn
// → /readyz 200, the image's Node flags and environment), its start is the part of the
// operator's that a faster operator could not cut.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { GROUP } from '../../api/schema/common.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { CLIENT_IDENTITIES, pkiPaths } from '../harness/pki.ts';
import { sleep } from './fixtures.ts';
import { containerEnv } from './memory.ts';
import { imageRuntime } from '../support/image-runtime.ts';
import { rssOf, spawnReady, type Runner, type RunnerContext } from './peer-procs.ts';
import { median } from './stats.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The apiserver's URL and the PEM files the floor reads: its CA and a client certificate and key. */
export interface FloorCredentials {
  readonly server: string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * The credentials of the bench's kubeconfig as files: the admin identity of the harness
 * cluster in `clusterDir` (the kubeconfig the harness writes holds the same PEMs inline).
 */
export function adminCredentials(clusterDir: string, server: string): FloorCredentials {
  const pki = pkiPaths(join(clusterDir, 'pki'));
  const admin = pki.clientCert(CLIENT_IDENTITIES.admin);
  return { server, ca: pki.caCert, cert: admin.cert, key: admin.key };
}

/**
 * The least a Node process that speaks TLS both ways holds: an HTTPS server with the bench's
 * certificate that has answered one request from its own keep-alive HTTPS client, which checked
 * the certificate against its CA (as the operator is a TLS client of the apiserver and a TLS
 * server for the webhook), plus the plain HTTP server the floor has.
 */
const tlsFloorProgram = (certDir: string, port: number, tlsPort: number): string => `
const fs = require('node:fs'), http = require('node:http'), https = require('node:https');
const read = (f) => fs.readFileSync(${JSON.stringify(certDir)} + '/' + f);
https.createServer({ cert: read('tls.crt'), key: read('tls.key') }, (q, s) => s.end('ok')).listen(${tlsPort}, '127.0.0.1', () => {
  const agent = new https.Agent({ keepAlive: true, ca: read('ca.crt') });
  https.get({ host: '127.0.0.1', port: ${tlsPort}, path: '/', agent, servername: 'localhost' }, (r) => {
    r.resume();
    r.on('end', () => http.createServer((q, s) => s.end()).listen(${port}));
  });
});`;

/**
 * Median ready time and idle RSS (read `settleMs` after ready) over `starts` starts of an idle
 * Node HTTP server with the image's flags (the Node floor), or with `certDir` of the TLS floor
 * (tlsFloorProgram).
 */
export async function floor(
  starts: number,
  settleMs: number,
  certDir?: string,
): Promise<{ readyMs: number; rss: number }> {
  const image = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const ready: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < starts; i++) {
    const [port = 0, tlsPort = 0] = await freePorts(2);
    const program =
      certDir === undefined
        ? `require('node:http').createServer((q, s) => s.end()).listen(${port})`
        : tlsFloorProgram(certDir, port, tlsPort);
    const p = await spawnReady(
      process.execPath,
      [...image.nodeFlags, '-e', program],
      containerEnv(image.env),
      `http://127.0.0.1:${port}/`,
    );
    ready.push(p.readyMs);
    await sleep(settleMs);
    rss.push(rssOf(p.pid));
    await p.stop();
  }
  return { readyMs: median(ready), rss: median(rss) };
}

/** The floor's program (CommonJS for `node -e`), for one namespace and its ports. */
function program(c: FloorCredentials, certDir: string, namespace: string, ports: readonly number[]): string {
  const [health = 0, metrics = 0, webhook = 0] = ports;
  const ns = encodeURIComponent(namespace);
  const paths = [
    `/apis/${GROUP}/v2/namespaces/${ns}/aitasks?limit=500`,
    `/apis/apps/v1/namespaces/${ns}/deployments?limit=500`,
    `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/aiops-operator-leader`,
    `/api/v1/namespaces/${ns}/secrets/${DEFAULT_INSTALL.conversionKeySecret}`,
  ];
  return `
const fs = require('node:fs'), http = require('node:http'), https = require('node:https');
const server = new URL(${JSON.stringify(c.server)});
const agent = new https.Agent({ keepAlive: true, ca: fs.readFileSync(${JSON.stringify(c.ca)}),
  cert: fs.readFileSync(${JSON.stringify(c.cert)}), key: fs.readFileSync(${JSON.stringify(c.key)}) });
const get = (path) => new Promise((resolve, reject) =>
  https.get({ host: server.hostname, port: server.port, path, agent }, (r) => { r.resume(); r.on('end', resolve); }).on('error', reject));
let ready = false;
http.createServer((q, s) => { s.statusCode = q.url === '/readyz' && !ready ? 503 : 200; s.end(); }).listen(${health}, '127.0.0.1');
http.createServer((q, s) => s.end()).listen(${metrics}, '127.0.0.1');
https.createServer({ cert: fs.readFileSync(${JSON.stringify(join(certDir, 'tls.crt'))}),
  key: fs.readFileSync(${JSON.stringify(join(certDir, 'tls.key'))}) }, (q, s) => s.end()).listen(${webhook}, '127.0.0.1');
Promise.all(${JSON.stringify(paths)}.map(get)).then(() => { ready = true; });`;
}

/**
 * The start floor as a runner of `peer`'s idle starts in one namespace, with the image's Node
 * flags and environment and the operator's webhook certificate (`ctx.certDir`). It serves no
 * metrics: only its start is measured.
 */
export function startFloorRunner(
  ctx: RunnerContext,
  credentials: FloorCredentials,
  nodeFlags: readonly string[],
  env: Record<string, string>,
): Runner {
  return {
    label: 'start floor',
    go: false,
    start: async (scope) => {
      if (typeof scope !== 'string') throw new Error('the start floor runs in one namespace');
      const ports = await freePorts(3);
      return spawnReady(
        process.execPath,
        [...nodeFlags, '-e', program(credentials, ctx.certDir, scope, ports)],
        containerEnv(env),
        `http://127.0.0.1:${ports[0] ?? 0}/readyz`,
      );
    },
  };
}
