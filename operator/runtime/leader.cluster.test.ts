// Integration: a leader cut off from the apiserver. The elector talks to the real apiserver
// through a loopback TCP proxy that can be cut (bytes dropped both ways, as in a network
// partition, so requests hang instead of failing). Its Lease requests must be aborted by the
// elector's own bound (renew deadline minus retry period), below the renew deadline, so it
// gives up leading, rather than waiting for the transport's 30 s idle timeout while a
// standby already holds the Lease.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { createLogger } from '../../lib/log.ts';
import { freshNamespace } from '../../test/support/cluster.ts';
import { OPERATOR_LEASE, operatorKubeconfig } from '../../test/support/operator-identity.ts';
import { Resources, type Lease } from './kinds.ts';
import { LeaderElector } from './leader.ts';

interface CuttableProxy {
  readonly port: number;
  /** From now on, drop every byte in both directions, on open and new connections. */
  cut(): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `host:port`. */
async function cuttableProxy(host: string, port: number): Promise<CuttableProxy> {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (chunk: Buffer) => {
      if (!cut) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cut) client.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    port: address.port,
    cut: () => {
      cut = true;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

interface Kubeconfig {
  clusters: { name: string; cluster: { server: string } & Record<string, unknown> }[];
}

function configOf(path: string): Kubeconfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return JSON.parse(kc.exportConfig()) as Kubeconfig;
}

/** A copy of the kubeconfig at `path` whose servers are `https://127.0.0.1:<port>`. */
function kubeconfigVia(path: string, port: number, dir: string): string {
  const kc = configOf(path);
  for (const c of kc.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
  const copy = join(dir, 'kubeconfig');
  writeFileSync(copy, JSON.stringify(kc), { mode: 0o600 });
  return copy;
}

test('a leader cut off from the apiserver aborts its hanging Lease requests below the renew deadline and stops leading', async (t) => {
  const ns = await freshNamespace('leader-cut', (fn) => t.after(fn));
  const dir = mkdtempSync(join(tmpdir(), 'aiops-leader-cut-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const operator = await operatorKubeconfig(ns);
  const real = new URL(configOf(operator).clusters[0]?.cluster.server ?? '');
  const proxy = await cuttableProxy(real.hostname, Number(real.port));
  t.after(() => proxy.close());
  const transport = await KubeTransport.create({ kubeconfig: kubeconfigVia(operator, proxy.port, dir) });
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('leader-test', {
    level: 'debug',
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const elector = new LeaderElector({
    leases: new ResourceClient<Lease>(transport, Resources.leases),
    namespace: ns,
    name: OPERATOR_LEASE,
    identity: 'cut-leader',
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 500,
    log,
  });
  let onLost: () => void = () => undefined;
  const lost = new Promise<void>((r) => (onLost = r));
  await elector.acquire(() => onLost());
  assert.equal(elector.leading, true);
  assert.equal(elector.attemptTimeoutMs, 2_500, 'renew deadline minus retry period');

  proxy.cut();
  await lost;
  assert.equal(elector.leading, false, 'no longer leading once the renew deadline passed');
  const aborted = lines.filter((l) => l.msg === 'lease request aborted: no answer within the attempt bound');
  assert.ok(
    aborted.length > 0,
    'a hanging Lease request was aborted by the elector, not left to the transport',
  );
  assert.ok(aborted.every((l) => l.boundMs === 2_500));
  await elector.release();
});
