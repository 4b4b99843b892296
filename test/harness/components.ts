// Command lines of the five control-plane processes. Kept apart from the start/stop logic so
// the flags (and why each is there) can be read in one place; README.md summarises them.
import { join } from 'node:path';
import { CLIENT_IDENTITIES, FRONT_PROXY_CLIENT, type Pki } from './pki.ts';
import type { ComponentSpec } from './process.ts';

/** Ports chosen for one cluster (all on 127.0.0.1). */
export interface ClusterPorts {
  readonly etcd: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
  readonly kwok: number;
}

/** Service IP range; 10.0.0.1 (the `kubernetes` Service) is in the serving cert's SANs. */
export const SERVICE_CIDR = '10.0.0.0/24';
/** Pod IP range kwok hands out. */
export const POD_CIDR = '10.244.0.0/16';
/** Annotation (key=value) marking the Nodes kwok manages. */
export const KWOK_NODE_ANNOTATION = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;

const HOST = '127.0.0.1';

/** Everything the arg builders need: cluster dir, binaries, ports, certs and kubeconfig paths. */
export interface ComponentContext {
  readonly dir: string;
  readonly binDir: string;
  readonly ports: ClusterPorts;
  readonly pki: Pki;
  /** Kubeconfig path per client component. */
  readonly kubeconfigs: {
    readonly controllerManager: string;
    readonly scheduler: string;
    readonly kwok: string;
  };
}

/** etcd: single member, data in <dir>/etcd, fsync off (test data only). */
export function etcdSpec(c: Pick<ComponentContext, 'dir' | 'binDir' | 'ports'>): ComponentSpec {
  const client = `http://${HOST}:${c.ports.etcd}`;
  const peer = `http://${HOST}:${c.ports.etcdPeer}`;
  // prettier-ignore
  return {
    name: 'etcd',
    binary: join(c.binDir, 'etcd'),
    args: [
      '--name=aiops', `--data-dir=${join(c.dir, 'etcd')}`,
      `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=aiops=${peer}`,
      '--unsafe-no-fsync=true', '--log-level=warn',
    ],
  };
}

/** kube-apiserver: client-cert auth, RBAC, ServiceAccount admission on (KCM creates the SAs). */
export function apiserverSpec(c: ComponentContext): ComponentSpec {
  // prettier-ignore
  return {
    name: 'kube-apiserver',
    binary: join(c.binDir, 'kube-apiserver'),
    args: [
      `--etcd-servers=http://${HOST}:${c.ports.etcd}`,
      `--bind-address=${HOST}`, `--advertise-address=${HOST}`, `--secure-port=${c.ports.apiserver}`,
      // A loopback advertise address is invalid in Endpoints: skip reconciling them. With a real
      // node the harness points the `kubernetes` Service at a forwarder (real-node/node.ts).
      '--endpoint-reconciler-type=none',
      `--cert-dir=${join(c.dir, 'apiserver')}`,
      `--tls-cert-file=${c.pki.servingCert}`, `--tls-private-key-file=${c.pki.servingKey}`,
      `--client-ca-file=${c.pki.clientCaCert}`,
      // Request-header (front-proxy) auth, as kubeadm sets it up: aggregated API servers and the
      // delegated auth of controller-manager/scheduler look these up in kube-system.
      `--requestheader-client-ca-file=${c.pki.frontProxyCaCert}`,
      `--requestheader-allowed-names=${FRONT_PROXY_CLIENT.cn}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${c.pki.clientCert(FRONT_PROXY_CLIENT).cert}`,
      `--proxy-client-key-file=${c.pki.clientCert(FRONT_PROXY_CLIENT).key}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${c.pki.saPub}`, `--service-account-signing-key-file=${c.pki.saKey}`,
      // Node: the real node's kubelet (system:node:aiops-node) gets exactly a kubelet's rights.
      '--authorization-mode=Node,RBAC',
      // Reach kubelets by InternalIP: resolving a node's hostname would ask the machine's DNS.
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${c.pki.clientCert(CLIENT_IDENTITIES.apiserverKubeletClient).cert}`,
      `--kubelet-client-key=${c.pki.clientCert(CLIENT_IDENTITIES.apiserverKubeletClient).key}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
    ],
  };
}

/** Flags shared by controller-manager and scheduler: kubeconfig, delegated auth, health port. */
function clientComponentArgs(kubeconfig: string, port: number, certDir: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    `--bind-address=${HOST}`,
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--leader-elect=false',
  ];
}

/** kube-controller-manager: all default controllers (none here needs a cloud provider). */
export function controllerManagerSpec(c: ComponentContext): ComponentSpec {
  return {
    name: 'kube-controller-manager',
    binary: join(c.binDir, 'kube-controller-manager'),
    args: [
      ...clientComponentArgs(c.kubeconfigs.controllerManager, c.ports.controllerManager, join(c.dir, 'kcm')),
      `--service-account-private-key-file=${c.pki.saKey}`,
      `--root-ca-file=${c.pki.caCert}`,
      '--use-service-account-credentials=true',
      '--controllers=*',
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--kube-api-qps=100',
      '--kube-api-burst=200',
    ],
  };
}

/** kube-scheduler with the default profile. */
export function schedulerSpec(c: ComponentContext): ComponentSpec {
  return {
    name: 'kube-scheduler',
    binary: join(c.binDir, 'kube-scheduler'),
    args: clientComponentArgs(c.kubeconfigs.scheduler, c.ports.scheduler, join(c.dir, 'scheduler')),
  };
}

/**
 * kwok's config file, written to <dir>/kwok.yaml and passed with --config so a developer's
 * ~/.kwok/kwok.yaml (kwok's default) cannot change the harness. No Stage documents: kwok
 * v0.7.0 then uses its built-in node and pod stages (pods go Running at once).
 *
 * `nodeLeaseDurationSeconds: 40` makes kwok renew each fake Node's Lease in kube-node-lease
 * (every 10 s), as a kubelet does. Without it (kwok's default, 0) its only heartbeat is the
 * Node status it rewrites about every 50 s, which the node lifecycle controller's grace
 * period (50 s) does not always outlast: it marks the Node NotReady for a moment and sets
 * every Pod on it Ready=False, which kwok never sets back (its pod stages are done), so every
 * Deployment on fake nodes stayed 0/N ready from ~45 s after start.
 */
export const KWOK_CONFIG =
  'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions:\n  nodeLeaseDurationSeconds: 40\n';

/** kwok: fakes kubelets for Nodes annotated kwok.x-k8s.io/node=fake (built-in default stages, v0.7.0). */
export function kwokSpec(c: ComponentContext): ComponentSpec {
  return {
    name: 'kwok',
    binary: join(c.binDir, 'kwok'),
    args: [
      `--config=${join(c.dir, 'kwok.yaml')}`,
      `--kubeconfig=${c.kubeconfigs.kwok}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION.key}=${KWOK_NODE_ANNOTATION.value}`,
      `--cidr=${POD_CIDR}`,
      `--node-ip=${HOST}`,
      `--server-address=${HOST}:${c.ports.kwok}`,
    ],
  };
}
