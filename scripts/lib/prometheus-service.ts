// npm start's Prometheus, reachable the way an install's is: as a Service of the operator's
// namespace through the apiserver's service proxy, named by an operator Deployment's
// --prometheus-url, so `kubectl aiops simulate` finds it with no flag, as on a cluster where
// the operator is installed. The operator itself runs beside the cluster (npm start), so the
// Deployment is kept at 0 replicas: it records the configuration, it runs nothing.
//
// The apiserver proxies neither to a loopback address nor to an endpoint no Pod holds: a relay
// on this host's first non-loopback IPv4 address passes connections on to Prometheus on
// loopback (only connections from this host's own addresses, so the network sees nothing),
// and a Pod that is never scheduled (a scheduling gate) holds that address as its own.

import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { operatorImage } from '../../api/releases.ts';
import { AlreadyExistsError } from '../../lib/kube/errors.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';

/** The Service npm start routes to its Prometheus, in the operator's namespace. */
export const PROMETHEUS_SERVICE = { name: 'prometheus', port: 9090 } as const;

/** The field manager of what npm start applies. */
const MANAGER = 'aiops-npm-start';
const LABELS = { 'app.kubernetes.io/managed-by': MANAGER };

/** This host's addresses, as a socket's remoteAddress shows them (IPv4 also IPv4-mapped). */
function ownAddresses(): Set<string> {
  const all = Object.values(networkInterfaces()).flatMap((l) => (l ?? []).map((a) => a.address));
  return new Set([...all, ...all.map((a) => `::ffff:${a}`)]);
}

/** This host's first non-loopback IPv4 address, or undefined when it has none. */
export function hostAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flatMap((l) => l ?? [])
    .find((a) => a.family === 'IPv4' && !a.internal)?.address;
}

/** A TCP relay listening on `ip`; `close` stops it and ends the connections it carries. */
export interface Relay {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Listens on a free port of `ip` and passes each connection from one of this host's own
 * addresses on to `target` (host:port); a connection from anywhere else is closed at once.
 */
export async function startRelay(ip: string, target: { host: string; port: number }): Promise<Relay> {
  const own = ownAddresses();
  const open = new Set<Socket>();
  const server = createServer((inbound) => {
    if (!own.has(inbound.remoteAddress ?? '')) {
      inbound.destroy();
      return;
    }
    const outbound = createConnection(target.port, target.host);
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.once('close', () => open.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, ip, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}

/** Server-side applies `object` at `path` (the collection's path plus the name) as npm start. */
async function apply(transport: KubeTransport, path: string, object: Record<string, unknown>): Promise<void> {
  await transport.request({
    method: 'PATCH',
    path,
    patchType: 'apply',
    query: { fieldManager: MANAGER, force: true },
    body: object,
  });
}

/**
 * Routes Service `aiops-system/prometheus:9090` to `relay` on `ip` (a never-scheduled Pod
 * holding `ip`, and the Service's Endpoints), and creates the Deployment the plugin reads the
 * operator's Prometheus URL from when there is none: 0 replicas, `--prometheus-url` naming the
 * Service. An existing Deployment of that name is left as it is. Idempotent on a reused cluster.
 */
export async function publishPrometheus(transport: KubeTransport, ip: string, relay: Relay): Promise<void> {
  const ns = DEFAULT_INSTALL.namespace;
  const { name, port } = PROMETHEUS_SERVICE;
  const core = `/api/v1/namespaces/${ns}`;
  const metadata = { name, namespace: ns, labels: LABELS };
  await apply(transport, `${core}/services/${name}`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { ports: [{ name: 'http', port }] },
  });
  await apply(transport, `${core}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      schedulingGates: [{ name: 'aiops.example.com/runs-beside-the-cluster' }],
      containers: [{ name: 'prometheus', image: 'quay.io/prometheus/prometheus' }],
    },
  });
  await transport.request({
    method: 'PATCH',
    path: `${core}/pods/${name}/status`,
    patchType: 'merge',
    body: { status: { podIP: ip, podIPs: [{ ip }] } },
  });
  await apply(transport, `${core}/endpoints/${name}`, {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata,
    subsets: [
      {
        addresses: [{ ip, targetRef: { kind: 'Pod', namespace: ns, name } }],
        ports: [{ name: 'http', port: relay.port }],
      },
    ],
  });
  const app = { 'app.kubernetes.io/name': DEFAULT_INSTALL.deployment };
  await transport
    .request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: DEFAULT_INSTALL.deployment, namespace: ns, labels: { ...LABELS, ...app } },
        spec: {
          replicas: 0,
          selector: { matchLabels: app },
          template: {
            metadata: { labels: app },
            spec: {
              containers: [
                {
                  name: 'manager',
                  image: operatorImage('0.0.0-local'),
                  args: [`--prometheus-url=http://${name}.${ns}.svc:${port}`],
                },
              ],
            },
          },
        },
      },
    })
    .catch((err: unknown) => {
      if (!(err instanceof AlreadyExistsError)) throw err;
    });
}
