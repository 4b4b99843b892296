// Starts and tears down the real node: containerd, kubelet and kube-proxy in a network
// namespace of their own (network.ts), joined to the loopback apiserver by a forwarder on the
// host end of the node's link, registered as Node `aiops-node` (tainted: only pods that
// tolerate it land there). One real node per machine: its namespace, cgroups and kubelet
// ports are machine-wide. The teardown leaves no process, namespace, link, route, nftables
// table, mount, cgroup or changed sysctl behind (host-state.ts).
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadIntoContainerd } from '../../../scripts/lib/images.ts';
import type { KubeHttp } from '../kube-http.ts';
import { writeKubeconfig } from '../kubeconfig.ts';
import { BUILD_SCRIPT } from '../paths.ts';
import { awaitBuild } from '../pending-builds.ts';
import { CLIENT_IDENTITIES, type Pki } from '../pki.ts';
import type { Component, ComponentSpec } from '../process.ts';
import { REQUIRE_REAL_NODE, skipUnlessRequired } from '../required.ts';
import {
  containerdConfig,
  containerdSpec,
  cniConfig,
  forwarderSpec,
  kubeletConfig,
  kubeletSpec,
  kubeProxySpec,
} from './config.ts';
import {
  createCgroups,
  killAll,
  leftoverNodeMounts,
  mountsUnder,
  pidsInCgroups,
  pidsMentioning,
  readSysctls,
  removeCgroups,
  restoreSysctls,
  unmountUnder,
} from './host-state.ts';
import { ensurePauseImage } from './images.ts';
import { CGROUP_ROOT, NODE_NET, nodePaths, PAUSE_IMAGE, REAL_NODE_NAME } from './layout.ts';
import { setupNetwork, teardownNetwork } from './network.ts';

/** What startRealNode needs from the cluster being started. */
export interface RealNodeContext {
  readonly dir: string;
  readonly binDir: string;
  readonly pki: Pki;
  readonly apiserverPort: number;
  /** Admin client of the apiserver. */
  readonly api: KubeHttp;
  /** Starts a process as part of the cluster (stopped with it). */
  readonly start: (spec: ComponentSpec) => Component;
  /** Polls until `check` yields a value, failing fast if a cluster process exits. */
  readonly wait: <T>(what: string, check: () => Promise<T | undefined>) => Promise<T>;
  readonly log: (line: string) => void;
  /** Local images (buildah storage) to load into the node's containerd besides the pause image. */
  readonly images: readonly string[];
  /** Moves the startup deadline `ms` later (after waiting for another real node). */
  readonly extendDeadline: (ms: number) => void;
}

const REQUIRED_COMMANDS = [
  '/usr/bin/containerd',
  '/usr/bin/containerd-shim-runc-v2',
  '/usr/sbin/runc',
  '/usr/lib/cni/bridge',
  '/usr/lib/cni/host-local',
  '/usr/lib/cni/loopback',
];
const PACKAGES =
  'apt-get install containerd runc containernetworking-plugins nftables iproute2 buildah busybox-static';

/**
 * What a real node lacks on this machine (with how to get it), or undefined if it can start.
 * Builds kubelet and kube-proxy first when they are missing (minutes, once; under .ci/run it
 * waits for its `node` build instead), as the test environment builds the control plane.
 */
export function realNodeMissing(binDir: string): string | undefined {
  if (process.getuid?.() !== 0) return 'a real node needs root (network namespaces, cgroups, mounts)';
  const missing = REQUIRED_COMMANDS.filter((c) => !existsSync(c));
  for (const c of ['nft', 'ip', 'nsenter', 'buildah', 'ctr', 'gcc'])
    try {
      execFileSync('sh', ['-c', `command -v ${c}`], { stdio: 'ignore' });
    } catch {
      missing.push(c);
    }
  if (missing.length > 0) return `missing ${missing.join(', ')}: ${PACKAGES}`;
  awaitBuild('node');
  if (nodeBinariesMissing(binDir).length > 0)
    try {
      execFileSync('bash', [BUILD_SCRIPT, 'node'], { stdio: ['ignore', 'ignore', 'inherit'] });
    } catch {
      // The check below names what is still missing.
    }
  const still = nodeBinariesMissing(binDir);
  return still.length > 0
    ? `missing ${still.join(', ')}: test/harness/build-control-plane.sh node`
    : undefined;
}

/** The real node's binaries (kubelet, kube-proxy) missing or not executable in `binDir`, as paths. */
function nodeBinariesMissing(binDir: string): string[] {
  return ['kubelet', 'kube-proxy']
    .map((b) => join(binDir, b))
    .filter((path) => {
      try {
        accessSync(path, constants.X_OK);
        return false;
      } catch {
        return true;
      }
    });
}

/**
 * A test's skip reason when no real node can start here, or undefined; throws instead when
 * AIOPS_REQUIRE_REAL_NODE is set.
 */
export function realNodeUnavailable(binDir: string): string | undefined {
  return skipUnlessRequired(REQUIRE_REAL_NODE, realNodeMissing(binDir));
}

/** The `kubernetes` Service's endpoint: the forwarder on the host end of the node's link. */
function kubernetesEndpointSlice(port: number): object {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      labels: {
        'kubernetes.io/service-name': 'kubernetes',
        'endpointslice.kubernetes.io/managed-by': 'aiops-harness',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [NODE_NET.hostIP], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  };
}

async function writeNodeFiles(ctx: RealNodeContext): Promise<void> {
  const p = nodePaths(ctx.dir);
  for (const d of [p.dir, p.cniConfDir, p.cniIpamDir, p.kubeletRoot, p.podLogs])
    mkdirSync(d, { recursive: true });
  writeFileSync(p.containerdConfig, containerdConfig(p));
  writeFileSync(join(p.cniConfDir, '10-aiops.conflist'), cniConfig(p));
  writeFileSync(p.kubeletConfig, kubeletConfig(p, ctx.pki.clientCaCert));
  // No nameserver line: with none at all containerd would copy the host's resolv.conf.
  writeFileSync(
    p.resolvConf,
    '# no nameserver: DNS queries cannot leave the machine\noptions timeout:1 attempts:1\n',
  );
  const server = `https://${NODE_NET.hostIP}:${ctx.apiserverPort}`;
  const kc = (id: (typeof CLIENT_IDENTITIES)['kubelet' | 'kubeProxy']) => {
    const { cert, key } = ctx.pki.clientCert(id);
    return { server, caFile: ctx.pki.caCert, certFile: cert, keyFile: key };
  };
  await writeKubeconfig(p.kubeletKubeconfig, kc(CLIENT_IDENTITIES.kubelet));
  await writeKubeconfig(p.proxyKubeconfig, kc(CLIENT_IDENTITIES.kubeProxy));
}

/** How long a real node waits for another one on this machine to go (env AIOPS_REAL_NODE_WAIT_MS). */
const WAIT_MS = Number(process.env['AIOPS_REAL_NODE_WAIT_MS'] ?? 20 * 60_000);

/**
 * True when the node namespace is over a minute old and no process runs in it or in the
 * node's cgroups (a fresh one is still being populated by the run that made it).
 */
function staleNetwork(): boolean {
  try {
    if (Date.now() - statSync(`/run/netns/${NODE_NET.netns}`).mtimeMs < 60_000) return false;
    const inNs = execFileSync('ip', ['netns', 'pids', NODE_NET.netns], { encoding: 'utf8' }).trim();
    return inNs === '' && pidsInCgroups(CGROUP_ROOT).length === 0;
  } catch {
    return false;
  }
}

/**
 * Creates the node network, waiting (polling every second, up to WAIT_MS) while another real
 * node holds it: the namespace is the machine-wide lock, so test files that each start a real
 * node run one after the other.
 */
async function acquireNetwork(log: (line: string) => void): Promise<void> {
  await whileAnotherNode(log, setupNetwork);
}

/**
 * Resolves once no real node is on this machine (removing one whose processes are gone),
 * polling every second up to WAIT_MS: what a test waits for before it records the machine
 * as it found it, so another run's node is not taken for the machine's own state.
 */
export function noOtherRealNode(log: (line: string) => void): Promise<void> {
  return whileAnotherNode(log, () => !existsSync(`/run/netns/${NODE_NET.netns}`));
}

/** Polls `free` (every second, up to WAIT_MS) while another real node holds the machine. */
async function whileAnotherNode(log: (line: string) => void, free: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  let said = false;
  for (;;) {
    if (free()) return;
    if (staleNetwork()) {
      log(`removing the network of a real node whose processes are gone (a killed run)`);
      teardownNetwork();
      removeCgroups(CGROUP_ROOT);
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(
        `network namespace ${NODE_NET.netns} is still held by another real node after ${WAIT_MS / 1000} s ` +
          '(a stale one: npm run cluster -- down, or ip netns del aiops-node)',
      );
    if (!said) log('another real node runs on this machine: waiting for it to stop');
    said = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Starts the real node and resolves once Node `aiops-node` is Ready with every image loaded.
 * On failure the caller's cluster teardown (stopRealNode) cleans up whatever was made.
 */
export async function startRealNode(ctx: RealNodeContext): Promise<void> {
  const why = realNodeMissing(ctx.binDir);
  if (why !== undefined) throw new Error(`cannot start a real node: ${why}`);
  const p = nodePaths(ctx.dir);
  ensurePauseImage();
  mkdirSync(p.dir, { recursive: true });
  const t0 = Date.now();
  await acquireNetwork(ctx.log);
  ctx.extendDeadline(Date.now() - t0);
  const leftovers = leftoverNodeMounts(mountsUnder(tmpdir()), tmpdir(), p.dir);
  if (leftovers.length > 0) {
    ctx.log(`unmounting ${leftovers.length} mounts the real node of a killed run left in ${tmpdir()}`);
    for (const m of leftovers) execFileSync('umount', ['-l', m]);
  }
  // From here on this cluster owns the machine's real node: the host-state file says so.
  writeFileSync(p.hostState, JSON.stringify({ sysctls: readSysctls() }, null, 2));
  await writeNodeFiles(ctx);
  createCgroups(CGROUP_ROOT);
  ctx.log(
    `real node network: namespace ${NODE_NET.netns}, link ${NODE_NET.hostIP} <-> ${NODE_NET.nodeIP}, pods ${NODE_NET.podCIDR}`,
  );
  ctx.start(forwarderSpec(ctx.apiserverPort));
  const slice = await ctx.api.request(
    'POST',
    '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    kubernetesEndpointSlice(ctx.apiserverPort),
  );
  if (slice.status !== 201 && slice.status !== 409)
    throw new Error(`EndpointSlice default/kubernetes: HTTP ${slice.status} ${slice.body}`);
  ctx.start(containerdSpec(p));
  await ctx.wait('containerd socket', () => {
    try {
      execFileSync('ctr', ['--address', p.containerdSocket, 'version'], { stdio: 'ignore', timeout: 2000 });
      return Promise.resolve(true);
    } catch {
      return Promise.resolve(undefined);
    }
  });
  loadIntoContainerd(p.containerdSocket, [PAUSE_IMAGE, ...ctx.images]);
  ctx.start(kubeletSpec(p, ctx.binDir));
  ctx.start(kubeProxySpec(p, ctx.binDir));
  await ctx.wait(`node ${REAL_NODE_NAME} Ready`, async () => {
    const res = await ctx.api.request('GET', `/api/v1/nodes/${REAL_NODE_NAME}`);
    if (res.status !== 200) return undefined;
    const node = JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } };
    return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });
}

/**
 * Tears down the real node of cluster dir `dir` once the cluster's own processes (kubelet,
 * kube-proxy, containerd, forwarder) were stopped: kills containers and shims, unmounts,
 * removes the network namespace, guards, cgroups, and restores the saved sysctls.
 * Idempotent; a no-op for a dir whose cluster never owned the real node.
 */
export async function stopRealNode(dir: string): Promise<void> {
  const p = nodePaths(dir);
  if (!existsSync(p.hostState)) return; // never owned the machine's real node
  await killAll(() => [...new Set([...pidsInCgroups(CGROUP_ROOT), ...pidsMentioning(p.dir)])]);
  unmountUnder(p.dir);
  teardownNetwork();
  removeCgroups(CGROUP_ROOT);
  if (existsSync(p.hostState)) {
    const saved = JSON.parse(readFileSync(p.hostState, 'utf8')) as { sysctls: Record<string, string> };
    restoreSysctls(saved.sysctls);
  }
}
