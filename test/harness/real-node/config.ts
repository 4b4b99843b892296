// Configuration files and command lines of the real node's processes: containerd (CRI,
// runc, overlayfs, the locally built pause image, the harness's CNI dir), the CNI bridge
// network, the kubelet (cgroupfs on cgroup v1, no nameserver for pods, no image GC) and
// kube-proxy (nftables). Why each non-default setting is there is said next to it.
import { join } from 'node:path';
import type { ComponentSpec } from '../process.ts';
import {
  CGROUP_ROOT,
  NODE_NET,
  PAUSE_IMAGE,
  REAL_NODE_LABEL,
  REAL_NODE_NAME,
  REAL_NODE_TAINT,
  type NodePaths,
} from './layout.ts';

const N = NODE_NET;

/** containerd 1.6 config (version 2). */
export function containerdConfig(p: NodePaths): string {
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"
# Unused plugins that would otherwise create dirs outside the cluster dir.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${p.containerdSocket}"

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # Root here lacks CAP_SYS_RESOURCE: a sandbox's oom_score_adj of -998 cannot be set.
  restrict_oom_score_adj = true
  # Pod network namespaces under the cluster dir, not /run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${p.cniConfDir}"
`;
}

/** The CNI network: a bridge in the node namespace, no masquerade, IPAM state in the cluster dir. */
export function cniConfig(p: NodePaths): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: N.cniNetwork,
      plugins: [
        {
          type: 'bridge',
          bridge: N.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: p.cniIpamDir,
            ranges: [[{ subnet: N.podCIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
      ],
    },
    null,
    2,
  );
}

/** KubeletConfiguration for the real node; `clientCA` authenticates the apiserver's kubelet client. */
export function kubeletConfig(p: NodePaths, clientCA: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: N.nodeIP,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: false },
        x509: { clientCAFile: clientCA },
      },
      authorization: { mode: 'AlwaysAllow' },
      containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
      cgroupDriver: 'cgroupfs',
      // Every pod under one cgroup the teardown removes.
      cgroupRoot: `/${CGROUP_ROOT}`,
      // This machine has cgroup v1 only; 1.34 warns instead of refusing when this is false.
      failCgroupV1: false,
      failSwapOn: false,
      // Root here cannot lower oom_score_adj (no CAP_SYS_RESOURCE).
      oomScoreAdj: 0,
      // Options only: pods get no nameserver, so no DNS query can leave the machine.
      resolvConf: p.resolvConf,
      clusterDomain: 'cluster.local',
      // Images are loaded locally and cannot be pulled again: never garbage-collect them.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      podLogsDir: p.podLogs,
      registerWithTaints: [REAL_NODE_TAINT],
      maxPods: 40,
      serializeImagePulls: false,
      rotateCertificates: false,
      nodeStatusUpdateFrequency: '2s',
    },
    null,
    2,
  );
}

/** `nsenter` prefix: run in the node's network namespace only. */
const netnsOf = (): string => `/run/netns/${N.netns}`;

/** containerd in the node namespace, so CNI creates the bridge there. */
export function containerdSpec(p: NodePaths): ComponentSpec {
  return {
    name: 'containerd',
    binary: '/usr/bin/containerd',
    args: [`--config=${p.containerdConfig}`],
    netns: netnsOf(),
  };
}

/** kubelet in the node namespace, registering Node `aiops-node` with its label and taint. */
export function kubeletSpec(p: NodePaths, binDir: string): ComponentSpec {
  // prettier-ignore
  return {
    name: 'kubelet',
    binary: join(binDir, 'kubelet'),
    args: [
      `--config=${p.kubeletConfig}`, `--kubeconfig=${p.kubeletKubeconfig}`, `--root-dir=${p.kubeletRoot}`,
      `--hostname-override=${REAL_NODE_NAME}`, `--node-ip=${N.nodeIP}`,
      `--node-labels=${REAL_NODE_LABEL}=true`, '--v=1',
    ],
    netns: netnsOf(),
  };
}

/** kube-proxy (nftables) in the node namespace; leaves the machine-wide conntrack sysctls alone. */
export function kubeProxySpec(p: NodePaths, binDir: string): ComponentSpec {
  // prettier-ignore
  return {
    name: 'kube-proxy',
    binary: join(binDir, 'kube-proxy'),
    args: [
      `--kubeconfig=${p.proxyKubeconfig}`, '--proxy-mode=nftables', `--hostname-override=${REAL_NODE_NAME}`,
      `--cluster-cidr=${N.podCIDR}`, `--bind-address=${N.nodeIP}`,
      '--healthz-bind-address=127.0.0.1:10256', '--metrics-bind-address=127.0.0.1:10249',
      '--conntrack-max-per-core=0', '--conntrack-tcp-timeout-established=0s', '--conntrack-tcp-timeout-close-wait=0s',
      '--v=1',
    ],
    netns: netnsOf(),
  };
}

/** The apiserver forwarder (host namespace): the node's link address → the loopback apiserver. */
export function forwarderSpec(apiserverPort: number): ComponentSpec {
  return {
    name: 'apiserver-forwarder',
    binary: process.execPath,
    args: [
      join(import.meta.dirname, 'forwarder.ts'),
      `${N.hostIP}:${apiserverPort}`,
      `127.0.0.1:${apiserverPort}`,
    ],
  };
}
