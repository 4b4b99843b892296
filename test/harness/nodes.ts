// The fake Nodes of the harness cluster. kwok does not create Nodes, it only plays kubelet
// for Nodes that carry its annotation; these have no taint so plain Deployments schedule.
import { KWOK_NODE_ANNOTATION } from './components.ts';
import type { KubeHttp } from './kube-http.ts';

/** Name of fake node `i`: kwok-node-0, kwok-node-1, … */
export const nodeName = (i: number): string => `kwok-node-${i}`;

/** The Node object for fake node `name`: capacity cpu 32, memory 256Gi, pods 110, label type=kwok. */
export function fakeNode(name: string): object {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: {
        [KWOK_NODE_ANNOTATION.key]: KWOK_NODE_ANNOTATION.value,
        'node.alpha.kubernetes.io/ttl': '0',
      },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/agent': '',
      },
    },
    spec: {},
    status: { capacity: resources, allocatable: resources },
  };
}

/** Creates the Node; an existing one (409) is fine. Throws on any other non-2xx status. No retries. */
export async function createNode(http: KubeHttp, name: string): Promise<void> {
  const res = await http.request('POST', '/api/v1/nodes', fakeNode(name));
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`create node ${name}: HTTP ${res.status} ${res.body}`);
}

interface NodeStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

/** True once the Node has condition Ready=True (set by kwok). */
export async function nodeReady(http: KubeHttp, name: string): Promise<boolean> {
  const res = await http.request('GET', `/api/v1/nodes/${name}`);
  if (res.status !== 200) return false;
  const node = JSON.parse(res.body) as NodeStatus;
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}
