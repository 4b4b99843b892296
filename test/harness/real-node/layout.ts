// Names and addresses of the real node, in one place: the network namespace the harness
// creates for it, the veth pair joining it to the host, the pod bridge, and where its
// files live inside a cluster dir. Every non-loopback address the tests dial is one of
// these (see ../README.md, "The real node", for the network rules they keep).
import { join } from 'node:path';

/** The node's network: everything here is created by the harness and removed by its teardown. */
export const NODE_NET = {
  /** Network namespace that holds containerd, kubelet, kube-proxy and the pod bridge. */
  netns: 'aiops-node',
  /** Host end of the veth pair (in the host namespace). */
  hostVeth: 'aiops-h0',
  /** Node end of the veth pair (in the node namespace). */
  nodeVeth: 'aiops-n0',
  /** Host address on the link: the apiserver forwarder and test servers (Prometheus) listen here. */
  hostIP: '10.250.0.1',
  /** The node's InternalIP, in the node namespace. */
  nodeIP: '10.250.0.2',
  /** Prefix length of the link subnet 10.250.0.0/24. */
  linkPrefix: 24,
  /** Pod addresses of the real node (the bridge takes .1). */
  podCIDR: '10.250.1.0/24',
  /** The CNI bridge, inside the node namespace. */
  bridge: 'aiops-br0',
  /** nftables table (family inet) of the guards, in the host and in the node namespace. */
  guardTable: 'aiops_guard',
  /** CNI network name (also names host-local's state). */
  cniNetwork: 'aiops-node',
} as const;

/** Name of the real Node object. */
export const REAL_NODE_NAME = 'aiops-node';
/** Label on the real Node (value "true"). */
export const REAL_NODE_LABEL = 'aiops.example.com/real-node';
/** Taint on the real Node (effect NoSchedule): only pods that tolerate it land there. */
export const REAL_NODE_TAINT = { key: 'aiops.example.com/real-node', effect: 'NoSchedule' } as const;
/** Toleration a pod needs to run on the real node. */
export const REAL_NODE_TOLERATION = {
  key: REAL_NODE_TAINT.key,
  operator: 'Exists',
  effect: 'NoSchedule',
} as const;
/** Cgroup (in every v1 hierarchy) under which the kubelet puts every pod. */
export const CGROUP_ROOT = 'aiops-node';
/** The sandbox (pause) image containerd uses; built locally (images.ts). */
export const PAUSE_IMAGE = 'aiops.local/pause:3.10';

/** Paths of the real node's files inside a cluster dir. */
export function nodePaths(clusterDir: string) {
  const d = join(clusterDir, 'node');
  return {
    dir: d,
    containerdConfig: join(d, 'containerd.toml'),
    containerdRoot: join(d, 'containerd', 'root'),
    containerdState: join(d, 'containerd', 'state'),
    containerdSocket: join(d, 'containerd.sock'),
    cniConfDir: join(d, 'cni'),
    cniIpamDir: join(d, 'cni-ipam'),
    kubeletConfig: join(d, 'kubelet.yaml'),
    kubeletRoot: join(d, 'kubelet'),
    kubeletKubeconfig: join(d, 'kubelet.kubeconfig'),
    proxyKubeconfig: join(d, 'kube-proxy.kubeconfig'),
    podLogs: join(d, 'pod-logs'),
    resolvConf: join(d, 'resolv.conf'),
    /** What the teardown must restore (sysctls read before the kubelet started). */
    hostState: join(d, 'host-state.json'),
  };
}
export type NodePaths = ReturnType<typeof nodePaths>;
