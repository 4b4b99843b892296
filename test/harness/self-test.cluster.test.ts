// End-to-end check of the harness itself: the real control plane comes up, a Deployment gets
// Running pods on the kwok nodes (so KCM, scheduler and kwok all work), and stop() leaves no
// process and no directory behind. Also: a component that dies at startup fails fast with its log,
// and every component whose port another process holds starts again on a new one.
import { kubectlWith } from './kubectl.ts';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { chmod, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCluster } from './cluster.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { PORT_TAKEN } from './port-retry.ts';
import { COMPONENT_BINARIES, defaultBinDir } from './paths.ts';
import { isRunning } from './process.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: pause
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: { app: pause }
  template:
    metadata:
      labels: { app: pause }
    spec:
      containers:
        - name: pause
          image: registry.invalid/pause:1
`;

/** kubectl against `kubeconfig`, feeding `input` on stdin; stdout, or a rejection with stderr. */
function kubectl(kubeconfig: string, args: readonly string[], input = ''): Promise<string> {
  return Promise.resolve().then(() => kubectlWith(kubeconfig)(args, input));
}

/** True if no process with this pid exists any more (owned children are reaped by Node). */
function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Pids of live (non-zombie) processes whose command line mentions `text` (e.g. a cluster dir). */
async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(text) && isRunning(Number(entry), cmdline.split('\0')[0] ?? ''))
        pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

void test(
  'a Deployment gets 2 ready replicas on kwok nodes; stop() leaves nothing behind',
  { timeout: 180_000 },
  async (t) => {
    const cluster = await startCluster();
    t.diagnostic(`cluster startup took ${cluster.startupMs} ms (${cluster.server})`);
    try {
      await kubectl(cluster.kubeconfigPath, ['apply', '-f', '-'], DEPLOYMENT);
      const deadline = Date.now() + 60_000;
      let ready = '';
      while (ready !== '2') {
        assert.ok(Date.now() < deadline, `readyReplicas still ${JSON.stringify(ready)} after 60 s`);
        await sleep(200);
        const jsonpath = '-o=jsonpath={.status.readyReplicas}';
        ready = (
          await kubectl(cluster.kubeconfigPath, ['get', 'deployment', 'pause', '-n', 'default', jsonpath])
        ).trim();
      }
      const pods = JSON.parse(
        await kubectl(cluster.kubeconfigPath, [
          'get',
          'pods',
          '-n',
          'default',
          '-l',
          'app=pause',
          '-o',
          'json',
        ]),
      ) as { items: { spec: { nodeName?: string }; status: { phase?: string } }[] };
      assert.equal(pods.items.length, 2);
      for (const pod of pods.items) {
        assert.equal(pod.status.phase, 'Running');
        assert.match(pod.spec.nodeName ?? '', /^kwok-node-[01]$/);
      }
    } finally {
      await cluster.stop();
    }
    assert.equal(cluster.processes.length, COMPONENT_BINARIES.length);
    for (const p of cluster.processes) {
      assert.ok(pidGone(p.pid), `${p.name} (pid ${p.pid}) is still there after stop()`);
      assert.ok(!isRunning(p.pid, p.binary));
    }
    assert.equal(existsSync(cluster.dir), false, `${cluster.dir} should be removed`);
    assert.deepEqual(await processesMentioning(cluster.dir), []);
  },
);

void test(
  'a component that exits at startup fails startCluster with its log tail and cleans up',
  { timeout: 60_000 },
  async () => {
    const binDir = await mkdtemp(join(tmpdir(), 'aiops-fakebin-'));
    try {
      for (const name of COMPONENT_BINARIES) {
        if (name !== 'kube-apiserver') await symlink(join(defaultBinDir(), name), join(binDir, name));
      }
      const fake = join(binDir, 'kube-apiserver');
      await writeFile(fake, '#!/bin/sh\necho "fake apiserver: refusing to start" >&2\nexit 3\n');
      await chmod(fake, 0o755);
      const dir = join(binDir, 'cluster');
      await assert.rejects(startCluster({ binDir, dir, timeoutMs: 30_000 }), (err: Error) => {
        assert.match(err.message, /kube-apiserver \(pid \d+\) exited during startup \(exit code 3\)/);
        assert.match(err.message, /fake apiserver: refusing to start/);
        return true;
      });
      assert.equal(existsSync(dir), false, 'cluster dir should be removed after a failed start');
      assert.deepEqual(await processesMentioning(dir), [], 'etcd should be stopped after a failed start');
    } finally {
      await rm(binDir, { recursive: true, force: true });
    }
  },
);

/** A TCP listener this test holds on 127.0.0.1, on a port the system picks; it drops every connection. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { port: address.port, server };
}

void test(
  'every component whose first ports another process holds starts on new ones, and the cluster comes up',
  { timeout: 180_000 },
  async (t) => {
    const held: Server[] = [];
    t.after(() => Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))));
    const first = new Map<string, number[]>();
    const choosePorts = async (count: number, name: string): Promise<number[]> => {
      if (first.has(name)) return freePorts(count);
      const ports: number[] = [];
      for (let i = 0; i < count; i++) {
        const h = await holdPort();
        held.push(h.server);
        ports.push(h.port);
      }
      first.set(name, ports);
      return ports;
    };
    const cluster = await startCluster({ choosePorts });
    try {
      const names = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];
      assert.deepEqual([...first.keys()].sort(), [...names].sort(), 'each component got held ports first');
      const taken = new Set([...first.values()].flat());
      const { etcd, etcdPeer, apiserver, controllerManager, scheduler, kwok } = cluster.ports;
      for (const port of [etcd, etcdPeer, apiserver, controllerManager, scheduler, kwok])
        assert.ok(!taken.has(port), `port ${port} is one the test holds`);
      for (const p of cluster.processes) {
        assert.equal(p.exitStatus(), undefined, `${p.name} runs`);
        assert.match(await readFile(p.logPath, 'utf8'), PORT_TAKEN, `${p.name} had lost its first port`);
      }
      assert.equal(cluster.processes.length, COMPONENT_BINARIES.length, 'the attempts that exited are gone');
      const nodes = await kubectl(cluster.kubeconfigPath, ['get', 'nodes', '-o', 'name']);
      assert.match(nodes, /node\/kwok-node-0/);
    } finally {
      await cluster.stop();
    }
  },
);
