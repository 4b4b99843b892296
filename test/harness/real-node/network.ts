// The real node's network, built so nothing can leave the machine: a network namespace of
// its own joined to the host by one veth pair, no default route on the node side, host
// routes only for the node's pod CIDR and the cluster's Service CIDR, and nftables guards
// (host: never forward to or from the veth; node: forward only between the pod bridge and
// the host end of the link). Pods get no nameserver (the kubelet's resolv.conf is empty).
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { run } from '../../../scripts/lib/run.ts';
import { SERVICE_CIDR } from '../components.ts';
import { NODE_NET } from './layout.ts';

const N = NODE_NET;

/** Runs a command in the node's network namespace (only the network namespace is entered). */
export function inNode(cmd: string, args: readonly string[], input?: string): string {
  return run('nsenter', [`--net=${netnsPath()}`, '--', cmd, ...args], input);
}

/** Path of the node namespace's handle, as `ip netns` keeps it. */
export const netnsPath = (): string => `/run/netns/${N.netns}`;

/** Host guard: the host never forwards a packet to or from the node's link. */
const HOST_GUARD = `table inet ${N.guardTable} {
  chain forward {
    type filter hook forward priority -10; policy accept;
    iifname "${N.hostVeth}" counter drop
    oifname "${N.hostVeth}" counter drop
  }
}
`;

/**
 * Node guard: forwarding only between pods, and between pods and the host end of the link;
 * the node itself sends nothing over the link but to the host end.
 */
const NODE_GUARD = `table inet ${N.guardTable} {
  chain forward {
    type filter hook forward priority -10; policy drop;
    iifname "${N.bridge}" oifname "${N.bridge}" accept
    iifname "${N.bridge}" oifname "${N.nodeVeth}" ip daddr ${N.hostIP} accept
    iifname "${N.nodeVeth}" oifname "${N.bridge}" ip saddr ${N.hostIP} accept
    counter
  }
  chain output {
    type filter hook output priority -10; policy accept;
    oifname "${N.nodeVeth}" ip daddr != ${N.hostIP} counter drop
  }
}
`;

/**
 * Creates the namespace, the veth pair, addresses, routes and guards, and turns on IPv4
 * forwarding inside the node namespace (a per-namespace sysctl; the host's is untouched).
 * Returns false, changing nothing, when the namespace exists (another real node holds it).
 * Any later failure removes what was made before it throws.
 */
export function setupNetwork(): boolean {
  try {
    run('ip', ['netns', 'add', N.netns]);
  } catch (err) {
    if (/File exists/.test((err as Error).message)) return false;
    throw err;
  }
  try {
    run('ip', ['link', 'add', N.hostVeth, 'type', 'veth', 'peer', 'name', N.nodeVeth, 'netns', N.netns]);
    run('ip', ['addr', 'add', `${N.hostIP}/${N.linkPrefix}`, 'dev', N.hostVeth]);
    run('ip', ['link', 'set', N.hostVeth, 'up']);
    run('ip', ['-n', N.netns, 'addr', 'add', `${N.nodeIP}/${N.linkPrefix}`, 'dev', N.nodeVeth]);
    run('ip', ['-n', N.netns, 'link', 'set', N.nodeVeth, 'up']);
    run('ip', ['-n', N.netns, 'link', 'set', 'lo', 'up']);
    for (const cidr of [N.podCIDR, SERVICE_CIDR])
      run('ip', ['route', 'add', cidr, 'via', N.nodeIP, 'dev', N.hostVeth]);
    run('nft', ['-f', '-'], HOST_GUARD);
    inNode('nft', ['-f', '-'], NODE_GUARD);
    inNode('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    return true;
  } catch (err) {
    teardownNetwork();
    throw err;
  }
}

/**
 * Removes what setupNetwork made: the namespace (with the veth pair, the bridge, routes and
 * rules inside it), the host routes through the link and the host guard. Idempotent. Every
 * process of the node must have exited first, or the namespace lives on.
 */
export function teardownNetwork(): void {
  if (existsSync(netnsPath())) run('ip', ['netns', 'del', N.netns]);
  // The host end goes with the namespace, asynchronously: delete it if it is still there.
  try {
    run('ip', ['link', 'del', N.hostVeth]);
  } catch (err) {
    if (!/Cannot find device/.test((err as Error).message)) throw err;
  }
  if (run('nft', ['list', 'tables']).split('\n').includes(`table inet ${N.guardTable}`))
    run('nft', ['delete', 'table', 'inet', N.guardTable]);
  // `ip netns add` made /run/netns a mount point; when no namespace is left, undo that.
  if (existsSync(NETNS_DIR) && readdirSync(NETNS_DIR).length === 0) {
    if (readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${NETNS_DIR} `)) run('umount', [NETNS_DIR]);
    rmdirSync(NETNS_DIR);
  }
}

const NETNS_DIR = '/run/netns';
