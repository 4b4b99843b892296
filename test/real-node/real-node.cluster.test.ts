// The operator as users run it, on a real node: the image built by `npm run image`, the
// committed deploy/aiops-operator.yaml applied with kubectl (plus the documented patch:
// the real node's toleration and where Prometheus is), real pods of a Deployment and of a
// StatefulSet healed by it, leader failover after kill -9, and a network that never leaves
// the machine. One cluster of its own (no kwok nodes) for the whole file: a machine runs one
// real node at a time.
import { eventually } from '../harness/wait.ts';
import { kubectlWith, type Kubectl } from '../harness/kubectl.ts';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fromYaml } from '../../lib/yaml.ts';
import { buildOperatorImage } from '../../scripts/image.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { defaultBinDir } from '../harness/paths.ts';
import { DEMO_WEB_IMAGE, ensureDemoWebImage } from '../harness/real-node/images.ts';
import { NODE_NET, REAL_NODE_NAME, REAL_NODE_TOLERATION } from '../harness/real-node/layout.ts';
import { inNode } from '../harness/real-node/network.ts';
import { realNodeUnavailable } from '../harness/real-node/node.ts';
import {
  isOperatorProcess,
  machineBeforeNode,
  machineSnapshot,
  podProcesses,
  webDeployment,
  webStatefulSet,
} from './support.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../..');
const unavailable = realNodeUnavailable(defaultBinDir());
const NS = 'aiops-system';
const APP_NS = 'shop';
const STS_NS = 'store';

/** A workload an AITask of this file targets. */
interface Target {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  namespace: string;
}
const WEB: Target = { kind: 'Deployment', name: 'web', namespace: APP_NS };
const CACHE: Target = { kind: 'StatefulSet', name: 'cache', namespace: STS_NS };

/** The fields of an AITask's status.lastDecision the tests read. */
interface Decision {
  executed?: boolean;
  action?: string;
  effect?: { pod?: string; podUID?: string };
}
const GAUGE = 'shop_load';

/**
 * The httpd servers of pod `uid` on the host: busybox httpd forks a child for each connection
 * (the readiness probe's, every second), so the children, whose parent is an httpd of the
 * pod, are left out.
 */
function servers(uid: string): { pid: number; cmdline: string }[] {
  const httpd = podProcesses(uid).filter((p) => p.cmdline.includes('httpd'));
  return httpd.filter((p) => !httpd.some((parent) => parent.pid === p.ppid));
}

interface Binding {
  metadata: { name: string; namespace?: string };
  roleRef: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}
interface BindingRules {
  binding: string;
  rules: unknown;
}
interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  roleRef?: { kind: string; name: string };
  rules?: unknown[];
}

interface PodView {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; restartCount: number; ready: boolean; containerID?: string }[];
  };
}

describe('real node', { skip: unavailable ?? false, concurrency: false, timeout: 900_000 }, () => {
  let cluster: Cluster;
  let kubectl: Kubectl;
  let prometheus: Prometheus;
  let exporter: Exporter;
  let before0: Record<string, unknown>;
  let image: string;
  const stoppers: (() => Promise<void>)[] = [];

  const pods = (ns: string, selector: string): PodView[] =>
    (JSON.parse(kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json'])) as { items: PodView[] })
      .items;
  const ready = (p: PodView): boolean =>
    p.status.phase === 'Running' &&
    (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const runningOnNode = (ns: string, selector: string, n: number): Promise<PodView[]> =>
    eventually(
      `${n} Ready pods ${selector} in ${ns}`,
      () => {
        const ps = pods(ns, selector).filter((p) => ready(p) && p.spec.nodeName === REAL_NODE_NAME);
        return ps.length === n && pods(ns, selector).length === n ? ps : undefined;
      },
      120_000,
    );

  before(async () => {
    before0 = await machineBeforeNode();
    image = buildOperatorImage({ log: () => undefined });
    ensureDemoWebImage();
    cluster = await startCluster({ realNode: true, nodes: 0, images: [image, DEMO_WEB_IMAGE] });
    stoppers.push(() => cluster.stop());
    kubectl = kubectlWith(cluster.kubeconfigPath);
    exporter = await startExporter();
    stoppers.push(() => exporter.close());
    prometheus = await startPrometheus([exporter.address], 30_000, NODE_NET.hostIP);
    stoppers.push(() => prometheus.stop());
  });
  after(async () => {
    for (const stop of stoppers.reverse()) await stop();
  });

  it('keeps the node network inside the machine: no default route, guards, no nameserver for pods', () => {
    const routes = inNode('ip', ['route', 'show']);
    assert.doesNotMatch(routes, /^default/m, 'the node namespace has no default route');
    assert.throws(() => inNode('ip', ['route', 'get', '192.0.2.1']), /unreachable/i);
    const hostRoutes = execFileSync('ip', ['route', 'show', 'dev', NODE_NET.hostVeth], { encoding: 'utf8' });
    assert.deepEqual(
      hostRoutes
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0])
        .sort(),
      ['10.0.0.0/24', '10.250.0.0/24', NODE_NET.podCIDR].sort(),
      'the host routes only the Service CIDR, the link and the pod CIDR to the node',
    );
    assert.match(
      execFileSync('nft', ['list', 'table', 'inet', NODE_NET.guardTable], { encoding: 'utf8' }),
      /drop/,
    );
    assert.match(inNode('nft', ['list', 'table', 'inet', NODE_NET.guardTable]), /policy drop/);
    assert.equal(
      readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(),
      before0['ipForward'],
      'host forwarding unchanged',
    );
  });

  it('runs real pods: a Deployment of demo-web serves HTTP through its ClusterIP, with no nameserver inside', async () => {
    kubectl(['create', 'namespace', APP_NS]);
    kubectl(['apply', '-n', APP_NS, '-f', '-'], JSON.stringify(webDeployment(2)));
    kubectl(['expose', 'deployment', 'web', '-n', APP_NS, '--port=80', '--target-port=8080']);
    const [pod] = await runningOnNode(APP_NS, 'app=web', 2);
    assert.ok(pod);
    assert.equal(servers(pod.metadata.uid).length, 1, 'one real httpd process on the host for the pod');
    const resolv = kubectl([
      'exec',
      '-n',
      APP_NS,
      pod.metadata.name,
      '--',
      '/bin/busybox',
      'cat',
      '/etc/resolv.conf',
    ]);
    assert.doesNotMatch(resolv, /nameserver/, 'pods get no nameserver');
    const clusterIP = kubectl(['get', 'svc', 'web', '-n', APP_NS, '-o', 'jsonpath={.spec.clusterIP}']);
    const body = await eventually('the Service to answer', () => get(`http://${clusterIP}/`), 120_000);
    assert.equal(body, 'demo-web\n');
  });

  it('installs with kubectl apply -f deploy/aiops-operator.yaml; the operator Pod runs the image, serves its probes and the webhook', async () => {
    kubectl(['apply', '-f', join(root, 'deploy/aiops-operator.yaml')]);
    kubectl([
      '-n',
      NS,
      'patch',
      'deployment',
      'aiops-operator',
      '--type=json',
      '-p',
      JSON.stringify(installPatch(prometheus.url)),
    ]);
    const ops = await runningOnNode(NS, 'app.kubernetes.io/name=aiops-operator', 2);
    for (const p of ops) {
      const procs = podProcesses(p.metadata.uid);
      assert.ok(
        procs.some((x) => isOperatorProcess(x.cmdline)),
        JSON.stringify(procs),
      );
      const uid = readFileSync(
        `/proc/${procs.find((x) => x.cmdline.startsWith('node'))?.pid}/status`,
        'utf8',
      ).match(/^Uid:\s+(\d+)/m)?.[1];
      assert.equal(uid, '1000', 'the operator runs as the image user 1000, not root');
    }
    const image0 = kubectl([
      '-n',
      NS,
      'get',
      'deploy',
      'aiops-operator',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    assert.equal(image0, image);
    const secret = JSON.parse(
      kubectl(['-n', NS, 'get', 'secret', 'aiops-webhook-service-cert', '-o', 'json']),
    ) as { data: Record<string, string> };
    const crdCA = await eventually(
      'the CRD caBundle',
      () =>
        kubectl([
          'get',
          'crd',
          'aitasks.aiops.example.com',
          '-o',
          'jsonpath={.spec.conversion.webhook.clientConfig.caBundle}',
        ]) || undefined,
      120_000,
    );
    assert.ok(Object.values(secret.data).includes(crdCA), 'the CRD trusts the CA in the operator Secret');
    assert.deepEqual(
      bindingsOf('aiops-operator'),
      manifestBindings(),
      "the ServiceAccount has exactly the manifest's RBAC",
    );
    assert.equal(canI(['update', 'deployments', '--subresource=scale', '-n', APP_NS]), true);
    assert.equal(canI(['create', 'pods', '--subresource=eviction', '-n', APP_NS]), true);
    assert.equal(canI(['delete', 'secrets', '-n', 'kube-system']), false);
    assert.equal(canI(['create', 'clusterrolebindings']), false);
  });

  it('converts through the operator Pod behind its Service: created at v1alpha1, read at v1 and v2', async () => {
    const task = {
      apiVersion: 'aiops.example.com/v1alpha1',
      kind: 'AITask',
      metadata: { name: 'old-style', namespace: APP_NS },
      spec: { target: 'web', threshold: 90, action: 'Noop', interval: '30s' },
    };
    await eventually(
      'a v1alpha1 create through the webhook',
      () => kubectl(['apply', '-f', '-'], JSON.stringify(task)),
      120_000,
    );
    const v1 = JSON.parse(
      kubectl(['get', 'aitasks.v1.aiops.example.com', 'old-style', '-n', APP_NS, '-o', 'json']),
    ) as { spec: { targetDeployment: string; threshold: number } };
    assert.equal(v1.spec.targetDeployment, 'web');
    assert.equal(v1.spec.threshold, 0.9);
    const v2 = JSON.parse(
      kubectl(['get', 'aitasks.v2.aiops.example.com', 'old-style', '-n', APP_NS, '-o', 'json']),
    ) as { spec: { target: { name: string } } };
    assert.equal(v2.spec.target.name, 'web');
    kubectl(['delete', 'aitask', 'old-style', '-n', APP_NS, '--wait=true', '--timeout=60s']);
  });

  it('heals real pods: RestartPod evicts one and a new process replaces it; ScaleUp and ScaleDown change the running processes', async () => {
    const before1 = await runningOnNode(APP_NS, 'app=web', 2);
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
    kubectl(['apply', '-f', '-'], JSON.stringify(task('RestartPod')));
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.95);
    const uids = new Set(before1.map((p) => p.metadata.uid));
    const after1 = await eventually(
      'a replaced pod',
      () => {
        const now = pods(APP_NS, 'app=web').filter(ready);
        return now.length === 2 &&
          now.some((p) => !uids.has(p.metadata.uid)) &&
          now.filter((p) => uids.has(p.metadata.uid)).length === 1
          ? now
          : undefined;
      },
      120_000,
    );
    const fresh = after1.find((p) => !uids.has(p.metadata.uid));
    assert.ok(
      fresh && podProcesses(fresh.metadata.uid).some((p) => p.cmdline.includes('httpd')),
      'the replacement runs a new httpd',
    );
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
    await eventually(
      'the RestartPod decision recorded as executed',
      () => (lastDecision().executed === true ? true : undefined),
      120_000,
    );

    kubectl(['apply', '-f', '-'], JSON.stringify(task('ScaleUp')));
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.95);
    const three = await runningOnNode(APP_NS, 'app=web', 3);
    assert.equal(
      three.flatMap((p) => servers(p.metadata.uid)).length,
      3,
      'one httpd in each of the three pods',
    );
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);

    kubectl(['apply', '-f', '-'], JSON.stringify(task('ScaleDown')));
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.95);
    await runningOnNode(APP_NS, 'app=web', 2);
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
    const replicas = Number(
      kubectl(['get', 'deploy', 'web', '-n', APP_NS, '-o', 'jsonpath={.spec.replicas}']),
    );
    assert.ok(replicas >= 2 && replicas <= 3, `within min/max: ${replicas}`);
  });

  it('heals a real StatefulSet: RestartPod evicts its highest ordinal, which the StatefulSet creates again with a new container; the other pod is untouched', async () => {
    kubectl(['create', 'namespace', STS_NS]);
    kubectl(['apply', '-n', STS_NS, '-f', '-'], JSON.stringify(webStatefulSet('cache', 2)));
    const named = (ps: PodView[], name: string): PodView | undefined =>
      ps.find((p) => p.metadata.name === name);
    const before1 = await runningOnNode(STS_NS, 'app=cache', 2);
    const zero = named(before1, 'cache-0');
    const one = named(before1, 'cache-1');
    assert.ok(zero && one, before1.map((p) => p.metadata.name).join(', '));
    const oldServers = servers(one.metadata.uid).map((p) => p.pid);
    assert.equal(oldServers.length, 1, 'one real httpd process on the host for cache-1');
    const labels = { namespace: STS_NS, statefulset: 'cache' };
    exporter.set(GAUGE, labels, 0.95);
    kubectl(['apply', '-f', '-'], JSON.stringify(task('RestartPod', CACHE, 3600)));

    const after1 = await eventually(
      'cache-1 created again under a new UID, Ready on the real node, beside cache-0',
      () => {
        const now = pods(STS_NS, 'app=cache');
        const fresh = named(now, 'cache-1');
        return now.length === 2 &&
          fresh !== undefined &&
          fresh.metadata.uid !== one.metadata.uid &&
          ready(fresh) &&
          fresh.spec.nodeName === REAL_NODE_NAME
          ? now
          : undefined;
      },
      120_000,
    );
    exporter.set(GAUGE, labels, 0.2);
    const effect = await eventually(
      'the RestartPod decision recorded as executed',
      () => {
        const d = lastDecision(CACHE);
        return d.executed === true && d.action === 'RestartPod' ? d.effect : undefined;
      },
      120_000,
    );
    assert.deepEqual(
      { pod: effect.pod, podUID: effect.podUID },
      { pod: 'cache-1', podUID: one.metadata.uid },
      'the eviction named the highest ordinal, bound to the UID it had',
    );
    const fresh = named(after1, 'cache-1');
    assert.ok(fresh);
    assert.match(fresh.status.containerStatuses?.[0]?.containerID ?? '', /^containerd:\/\//);
    const newServers = servers(fresh.metadata.uid);
    assert.equal(newServers.length, 1, 'one real httpd process on the host for the new cache-1');
    assert.ok(!oldServers.includes(newServers[0]?.pid ?? -1), 'a new process, not the evicted one');
    assert.deepEqual(podProcesses(one.metadata.uid), [], "the evicted pod's processes are gone");
    const zero1 = named(after1, 'cache-0');
    assert.deepEqual(
      {
        uid: zero1?.metadata.uid,
        restarts: zero1?.status.containerStatuses?.[0]?.restartCount,
        ready: zero1 !== undefined && ready(zero1),
      },
      { uid: zero.metadata.uid, restarts: zero.status.containerStatuses?.[0]?.restartCount, ready: true },
      'cache-0 untouched',
    );
    kubectl(['delete', 'aitask', 'cache-heal', '-n', STS_NS, '--wait=true', '--timeout=60s']);
  });

  it('fails over: kill -9 of the leader process → the standby leads within the lease, nothing is done twice, the kubelet restarts the container', async () => {
    const lease = (): { holderIdentity?: string; leaseTransitions?: number } =>
      (
        JSON.parse(kubectl(['get', 'lease', '-n', NS, '-o', 'json'])) as {
          items: { spec: { holderIdentity?: string; leaseTransitions?: number } }[];
        }
      ).items[0]?.spec ?? {};
    const leader0 = await eventually('a leader', () => lease().holderIdentity, 120_000);
    const leaderPod = pods(NS, 'app.kubernetes.io/name=aiops-operator').find((p) =>
      leader0.startsWith(p.metadata.name),
    );
    assert.ok(leaderPod, `leader ${leader0} is one of the operator pods`);
    const proc = podProcesses(leaderPod.metadata.uid).find((p) => p.cmdline.startsWith('node'));
    assert.ok(proc);
    const restarts0 = leaderPod.status.containerStatuses?.[0]?.restartCount ?? 0;
    const decisionsBefore = actionEvents();
    assert.ok(
      decisionsBefore.length >= 3,
      `the actions of the healing test are Events: ${decisionsBefore.join(', ')}`,
    );
    process.kill(proc.pid, 'SIGKILL');
    const t0 = Date.now();
    const leader1 = await eventually(
      'a new leader',
      () => {
        const h = lease().holderIdentity;
        return h !== undefined && h !== leader0 ? h : undefined;
      },
      60_000,
    );
    const took = Date.now() - t0;
    assert.ok(took < 30_000, `standby took over in ${took} ms (lease 15 s + renew)`);
    assert.notEqual(leader1, leader0);
    await eventually(
      'the kubelet to restart the killed container',
      () => {
        const p = pods(NS, 'app.kubernetes.io/name=aiops-operator').find(
          (x) => x.metadata.uid === leaderPod.metadata.uid,
        );
        return (p?.status.containerStatuses?.[0]?.restartCount ?? 0) > restarts0 && p && ready(p)
          ? true
          : undefined;
      },
      120_000,
    );
    assert.deepEqual(actionEvents(), decisionsBefore, 'no action repeated by the new leader');
  });

  it('cordons the real node under the shipped RBAC; deleting the AITask lifts it (finalizer run by the operator in the Pod)', async () => {
    // Two Nodes no kubelet runs: the cordon cap counts them, so one cordon of three nodes
    // (33 %) is within the default 34 %; never Ready, nothing is scheduled on them.
    const placeholders = ['placeholder-0', 'placeholder-1'];
    for (const name of placeholders)
      kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name } }));
    const unschedulable = (): boolean =>
      kubectl(['get', 'node', REAL_NODE_NAME, '-o', 'jsonpath={.spec.unschedulable}']).trim() === 'true';
    kubectl(['apply', '-f', '-'], JSON.stringify(task('CordonNode')));
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.95);
    await eventually(
      'the real node cordoned by web-heal',
      () => (unschedulable() ? true : undefined),
      120_000,
    );
    exporter.set(GAUGE, { namespace: APP_NS, deployment: 'web' }, 0.2);
    kubectl(['delete', 'aitask', 'web-heal', '-n', APP_NS, '--wait=true', '--timeout=60s']);
    assert.equal(unschedulable(), false, "the finalizer lifted web-heal's cordon");
    kubectl(['delete', 'node', ...placeholders]);
    assert.match(
      kubectl(['get', 'aitasks', '-n', APP_NS]) + kubectl(['get', 'aitasks', '-n', APP_NS, '-o', 'name']),
      /^(No resources found.*)?$/s,
    );
  });

  it('tears down leaving no namespace, link, route, table, chain, mount, cgroup or changed sysctl', async () => {
    for (const stop of stoppers.splice(0).reverse()) await stop();
    assert.deepEqual(machineSnapshot(), before0);
  });

  /**
   * AITask `NAME-heal` in the target's namespace: `action` on `target` when
   * shop_load{namespace, deployment|statefulset=NAME} passes 0.8, every 10 s, scaling between
   * 2 and 3 replicas, `cooldownSeconds` apart (default 0).
   */
  function task(
    action: 'RestartPod' | 'ScaleUp' | 'ScaleDown' | 'CordonNode',
    target: Target = WEB,
    cooldownSeconds = 0,
  ): object {
    return {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: `${target.name}-heal`, namespace: target.namespace },
      spec: {
        target: { kind: target.kind, name: target.name },
        trigger: {
          query: `${GAUGE}{namespace="${target.namespace}",${target.kind.toLowerCase()}="${target.name}"}`,
          threshold: 0.8,
        },
        remediation: { action, scale: { step: 1, minReplicas: 2, maxReplicas: 3 }, cooldownSeconds },
        intervalSeconds: 10,
      },
    };
  }
  /** `kubectl auth can-i` as the operator's ServiceAccount (exit 0 yes, 1 no). */
  function canI(args: readonly string[]): boolean {
    const r = spawnSync(
      'kubectl',
      [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        'auth',
        'can-i',
        ...args,
        `--as=system:serviceaccount:${NS}:aiops-operator`,
      ],
      { encoding: 'utf8' },
    );
    if (r.status === 0 && r.stdout.trim() === 'yes') return true;
    if (r.status === 1 && r.stdout.trim() === 'no') return false;
    throw new Error(`kubectl auth can-i ${args.join(' ')}: exit ${String(r.status)} ${r.stdout}${r.stderr}`);
  }
  /** Every (Cluster)RoleBinding naming the ServiceAccount, with the rules of its role, as on the server. */
  function bindingsOf(sa: string): BindingRules[] {
    const out: BindingRules[] = [];
    for (const kind of ['clusterrolebindings', 'rolebindings']) {
      const list = JSON.parse(kubectl(['get', kind, '-A', '-o', 'json'])) as { items: Binding[] };
      for (const b of list.items.filter((x) =>
        (x.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === NS),
      )) {
        const roleKind = b.roleRef.kind === 'ClusterRole' ? 'clusterrole' : 'role';
        const role = JSON.parse(
          kubectl([
            'get',
            roleKind,
            b.roleRef.name,
            ...(roleKind === 'role' ? ['-n', b.metadata.namespace ?? ''] : []),
            '-o',
            'json',
          ]),
        ) as { rules: unknown[] };
        out.push({ binding: `${kind}/${b.metadata.namespace ?? ''}/${b.metadata.name}`, rules: role.rules });
      }
    }
    return out.sort((a, b) => a.binding.localeCompare(b.binding));
  }
  /** The same, from deploy/aiops-operator.yaml. */
  function manifestBindings(): BindingRules[] {
    const docs = readFileSync(join(root, 'deploy/aiops-operator.yaml'), 'utf8')
      .split(/^---$/m)
      .filter((d) => d.replace(/^#.*$/gm, '').trim() !== '')
      .map((d) => fromYaml(d))
      .filter((d): d is Manifest => typeof d === 'object' && d !== null);
    return docs
      .filter((d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding')
      .map((b) => {
        const role = docs.find((d) => d.kind === b.roleRef?.kind && d.metadata.name === b.roleRef.name);
        const kind = b.kind === 'ClusterRoleBinding' ? 'clusterrolebindings' : 'rolebindings';
        return { binding: `${kind}/${b.metadata.namespace ?? ''}/${b.metadata.name}`, rules: role?.rules };
      })
      .sort((x, y) => x.binding.localeCompare(y.binding));
  }
  /** status.lastDecision of `target`'s task (see task()), {} while it has none. */
  function lastDecision(target: Target = WEB): Decision {
    return (
      (
        JSON.parse(
          kubectl([
            'get',
            'aitasks.v2.aiops.example.com',
            `${target.name}-heal`,
            '-n',
            target.namespace,
            '-o',
            'json',
          ]),
        ) as { status?: { lastDecision?: Decision } }
      ).status?.lastDecision ?? {}
    );
  }
  function actionEvents(): string[] {
    const list = JSON.parse(kubectl(['get', 'events', '-n', APP_NS, '-o', 'json'])) as {
      items: {
        reason: string;
        count?: number;
        metadata: { uid: string };
        involvedObject: { kind: string };
      }[];
    };
    return list.items
      .filter(
        (e) =>
          e.involvedObject.kind === 'AITask' && /^(RestartPod|ScaleUp|ScaleDown|CordonNode)$/.test(e.reason),
      )
      .map((e) => `${e.metadata.uid}:${e.reason}:${e.count ?? 1}`)
      .sort();
  }
});

/**
 * The README's patch for the harness's real node: tolerate its taint, and point the
 * operator at the Prometheus the test runs on the host end of the node's link.
 */
function installPatch(prometheusUrl: string): object[] {
  return [
    { op: 'add', path: '/spec/template/spec/tolerations', value: [REAL_NODE_TOLERATION] },
    {
      op: 'add',
      path: '/spec/template/spec/containers/0/args/-',
      value: `--prometheus-url=${prometheusUrl}`,
    },
  ];
}

/** GET `url` (2 s timeout); resolves the body of a 200, undefined otherwise. */
function get(url: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}
