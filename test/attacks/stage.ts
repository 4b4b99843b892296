// The stage the attack suites play on: a control plane of their own (so the AITask CRD's
// conversion can point at the operator's hosted webhook, as on a real install), the operator
// as deployed — one process hosting controller and webhook, run with the image's Node flags and
// environment in a memory cgroup of the shipped memory limit (Node sizes its heap from it as in
// the pod, and the kernel OOM-kills it past the limit), authenticated as a ServiceAccount
// holding exactly the CSV's permissions, /metrics over HTTPS behind TokenReview — a real
// Prometheus, a scraper bound to the shipped metrics reader role, and two tenants, each a
// ServiceAccount that may only write AITasks (status included), Deployments, StatefulSets
// (their scale too) and Pods in its own namespace, as an admin grants tenants apps workloads. Attacks are made with the tenant's own credentials, so whatever the
// apiserver refuses a tenant is refused here too.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AITaskClient } from '../../api/aitask-client.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { buildCRD } from '../../api/crd.ts';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { METRICS_READER_ROLE, metricsReaderClusterRole } from '../../api/rbac.ts';
import {
  Resources,
  type Deployment,
  type Node,
  type Pod,
  type Workload,
} from '../../operator/runtime/kinds.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { installCRD } from '../../scripts/lib/crd-install.ts';
import { OPERATOR_MEMORY_LIMIT_MIB } from '../../scripts/olm/deployment.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { csvInstallSpec, installAsOLM } from '../olm/install-as-olm.ts';
import { serviceAccountKubeconfig } from '../support/operator-identity.ts';
import { imageRuntime } from '../support/image-runtime.ts';
import { heapLimitUnder } from '../support/memory-cgroup.ts';
import { deployment } from '../support/workloads.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from '../support/operator.ts';

/** The image's Node flags and environment (its young generation and malloc settings), which the operator runs with here. */
const IMAGE = imageRuntime(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8'));

/** The gauge every attack task reads; each series carries the namespace it belongs to. */
export const LOAD = 'attack_load';

/** One tenant: its namespace and clients made with its own token. */
export interface Tenant {
  readonly namespace: string;
  readonly kubeconfig: string;
  readonly tasks: AITaskClient;
  readonly tasksV1: AITaskClient<'v1'>;
  readonly tasksV1alpha1: AITaskClient<'v1alpha1'>;
  readonly deployments: ResourceClient<Deployment>;
  readonly statefulSets: ResourceClient<Workload>;
  readonly pods: ResourceClient<Pod>;
}

/** What an attack suite plays on. */
export interface Stage {
  readonly cluster: Cluster;
  readonly admin: KubeTransport;
  readonly nodes: ResourceClient<Node>;
  readonly prometheus: Prometheus;
  readonly exporter: Exporter;
  /** The operator process now running (restartOperator replaces it). */
  readonly operator: OperatorProcess;
  /**
   * The V8 heap limit (heap_size_limit, MiB) Node gives itself with the image's flags in the
   * operator's memory cgroup of OPERATOR_MEMORY_LIMIT_MIB: ~259 of 384 on Node 24.
   */
  readonly heapLimitMiB: number;
  /**
   * Stops the operator (SIGTERM) and starts it again as it was started, in a memory cgroup
   * of the shipped limit again; resolves once the new one answers /readyz. Throws if the old
   * one's requests were refused by the shipped RBAC or it was OOM-killed, or the new one
   * does not get ready.
   */
  restartOperator(): Promise<void>;
  /**
   * Stops the operator (SIGTERM), its hosted webhook with it, until startOperator; throws as
   * restartOperator does for the old one. `operator` is the stopped process meanwhile.
   */
  stopOperator(): Promise<void>;
  /** Starts the stopped operator again as it was started; resolves or throws as restartOperator does for the new one. */
  startOperator(): Promise<void>;
  /** The tenant that attacks. */
  readonly mallory: Tenant;
  /** A bystander tenant whose work must go on undisturbed. */
  readonly alice: Tenant;
  /** The conversion webhook the operator hosts: its port on loopback and the CA its certificate is signed by. */
  readonly webhook: { readonly port: number; readonly ca: string };
  /** What a scraper bound to the aiops-metrics-reader ClusterRole reads /metrics with (HTTPS, as shipped). */
  readonly scraper: { readonly token: string; readonly ca: string };
  /** Admin clients of every version, for reads across namespaces. */
  readonly adminTasks: { v2: AITaskClient; v1: AITaskClient<'v1'>; v1alpha1: AITaskClient<'v1alpha1'> };
  stop(): Promise<void>;
}

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Rules of a tenant: AITasks (status too), Deployments, StatefulSets (the scale of each too)
 * and Pods of its namespace, nothing else.
 */
const TENANT_RULES = [
  {
    apiGroups: ['aiops.example.com'],
    resources: ['aitasks', 'aitasks/status'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
];

async function makeTenant(
  admin: KubeTransport,
  adminKubeconfig: string,
  ns: string,
  dir: string,
): Promise<Tenant> {
  const post = (path: string, body: unknown): Promise<unknown> =>
    admin.request({ method: 'POST', path, body });
  await post('/api/v1/namespaces', { metadata: { name: ns } });
  await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'tenant' } });
  await post(`/apis/${RBAC}/v1/namespaces/${ns}/roles`, {
    metadata: { name: 'tenant' },
    rules: TENANT_RULES,
  });
  await post(`/apis/${RBAC}/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name: 'tenant' },
    roleRef: { apiGroup: RBAC, kind: 'Role', name: 'tenant' },
    subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: ns }],
  });
  const kubeconfig = await serviceAccountKubeconfig(
    admin,
    adminKubeconfig,
    ns,
    'tenant',
    join(dir, `${ns}.kubeconfig`),
  );
  const t = await KubeTransport.create({ kubeconfig });
  return {
    namespace: ns,
    kubeconfig,
    tasks: new AITaskClient(t, 'v2'),
    tasksV1: new AITaskClient(t, 'v1'),
    tasksV1alpha1: new AITaskClient(t, 'v1alpha1'),
    deployments: new ResourceClient<Deployment>(t, Resources.deployments),
    statefulSets: new ResourceClient<Workload>(t, Resources.statefulsets),
    pods: new ResourceClient<Pod>(t, Resources.pods),
  };
}

/**
 * What a monitoring stack does to scrape the operator: the shipped aiops-metrics-reader
 * ClusterRole bound to ServiceAccount `monitoring/prometheus`; returns a token of it.
 */
async function scraperToken(admin: KubeTransport): Promise<string> {
  const post = (path: string, body: unknown): Promise<unknown> =>
    admin.request({ method: 'POST', path, body });
  await post('/api/v1/namespaces', { metadata: { name: 'monitoring' } });
  await post('/api/v1/namespaces/monitoring/serviceaccounts', { metadata: { name: 'prometheus' } });
  await post(`/apis/${RBAC}/v1/clusterroles`, metricsReaderClusterRole());
  await post(`/apis/${RBAC}/v1/clusterrolebindings`, {
    metadata: { name: 'prometheus-aiops-metrics' },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: METRICS_READER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
  });
  const review = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: '/api/v1/namespaces/monitoring/serviceaccounts/prometheus/token',
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86_400 },
    },
  });
  return review.status.token;
}

/** How a suite wants its stage. */
export interface StageOptions {
  /** kwok nodes (default 2). */
  readonly nodes?: number;
  /** Operator flags added to the stage's own. */
  readonly args?: readonly string[];
  /** `user:password` the operator's --prometheus-url carries (Prometheus ignores it). */
  readonly prometheusUserinfo?: string;
}

/**
 * Starts the stage: cluster, Prometheus scraping an exporter, the AITask CRD converting
 * through the operator's hosted webhook, the operator under the CSV's RBAC (query
 * confinement on, as shipped), and the tenants `mallory` and `alice`.
 */
export async function startStage(log: (line: string) => void, opts: StageOptions = {}): Promise<Stage> {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-attacks-'));
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const heapLimitMiB = Math.round(
      (await heapLimitUnder(OPERATOR_MEMORY_LIMIT_MIB, IMAGE.nodeFlags)) / 2 ** 20,
    );
    process.stderr.write(
      `[stage] the operator runs in a ${OPERATOR_MEMORY_LIMIT_MIB} MiB memory cgroup: V8 heap limit ${heapLimitMiB} MiB\n`,
    );
    const cluster = await startCluster({ log, nodes: opts.nodes ?? 2 });
    stops.push(() => cluster.stop());
    const admin = await KubeTransport.create({ kubeconfig: cluster.kubeconfigPath });
    const exporter = await startExporter();
    stops.push(() => exporter.close());
    const prometheus = await startPrometheus([exporter.address]);
    stops.push(() => prometheus.stop());
    const certs = createServingCert(join(dir, 'certs'));
    const [webhookPort = 0] = await freePorts(1);
    await installCRD(
      admin,
      buildCRD({
        conversion: {
          url: `https://127.0.0.1:${webhookPort}/convert`,
          caBundle: Buffer.from(certs.caPem).toString('base64'),
        },
      }),
    );
    const operatorNs = DEFAULT_INSTALL.namespace;
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: operatorNs } },
    });
    const operatorKubeconfig = await installAsOLM(
      admin,
      cluster.kubeconfigPath,
      operatorNs,
      csvInstallSpec(),
      dir,
      (fn) => stops.push(fn),
    );
    const scraper = { token: await scraperToken(admin), ca: certs.caPem };
    const mallory = await makeTenant(admin, cluster.kubeconfigPath, 'mallory', dir);
    const alice = await makeTenant(admin, cluster.kubeconfigPath, 'alice', dir);
    const start = (): Promise<OperatorProcess> =>
      startOperatorProcess(
        [
          `--prometheus-url=${
            opts.prometheusUserinfo === undefined
              ? prometheus.url
              : prometheus.url.replace('://', `://${opts.prometheusUserinfo}@`)
          }`,
          `--webhook-port=${webhookPort}`,
          `--webhook-cert-dir=${certs.dir}`,
          `--leader-election-namespace=${operatorNs}`,
          `--metrics-cert-path=${certs.dir}`,
          ...(opts.args ?? []),
        ],
        {
          ...IMAGE.env,
          AIOPS_CONFINE_QUERIES: 'true',
          AIOPS_METRICS_SECURE: 'true',
          POD_NAMESPACE: operatorNs,
        },
        {
          kubeconfig: operatorKubeconfig,
          metrics: scraper,
          nodeArgs: IMAGE.nodeFlags,
          memoryLimitMiB: OPERATOR_MEMORY_LIMIT_MIB,
        },
      );
    let operator = await start();
    stops.push(async () => {
      await operator.stop();
    });
    return {
      cluster,
      admin,
      nodes: new ResourceClient<Node>(admin, Resources.nodes),
      prometheus,
      exporter,
      heapLimitMiB,
      get operator() {
        return operator;
      },
      async restartOperator() {
        await operator.stop();
        operator = await start();
      },
      async stopOperator() {
        await operator.stop();
      },
      async startOperator() {
        operator = await start();
      },
      mallory,
      alice,
      scraper,
      webhook: { port: webhookPort, ca: certs.caPem },
      adminTasks: {
        v2: new AITaskClient(admin, 'v2'),
        v1: new AITaskClient(admin, 'v1'),
        v1alpha1: new AITaskClient(admin, 'v1alpha1'),
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What an attack file starts in its `before` hook and stops (or closes) in its `after` hook. */
export type Stoppable = { stop(): Promise<unknown> } | { close(): Promise<unknown> };

/**
 * Stops (or closes), in order, each of `parts` that was started: an `after` hook passes the
 * variables its `before` hook assigns, and skips by this those a `before` that failed never set
 * (a start that failed part-way stopped what it had started itself, as startStage does). Every
 * part is stopped even when one throws; the first error is then rethrown.
 */
export async function stopStarted(...parts: readonly (Stoppable | undefined)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const part of parts) {
    if (part === undefined) continue;
    await ('stop' in part ? part.stop() : part.close()).catch((err: unknown) => errors.push(err));
  }
  if (errors.length > 0) throw errors[0];
}

/**
 * An AITask on Deployment `name` of its own namespace that breaches while LOAD of `name` is
 * over 1 (or `spec.trigger`'s threshold), evaluated every 10 s unless `spec` says otherwise.
 */
export function loadTask(
  name: string,
  remediation: v2.Spec['remediation'],
  spec: Partial<v2.Spec> = {},
): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name },
      trigger: { query: `max(${LOAD}{deployment="${name}"})`, threshold: 1 },
      remediation,
      intervalSeconds: 10,
      ...spec,
    },
  };
}

/**
 * Deployment `name` of `tenant` (1 replica) with its LOAD at 5, and an AITask in LLM mode on
 * it asking `llm` at every evaluation (room to scale up, no cooldown), made with the tenant's token.
 */
export async function askingLLM(
  stage: Stage,
  tenant: Tenant,
  name: string,
  llm: NonNullable<v2.Spec['decision']>['llm'],
): Promise<void> {
  await tenant.deployments.create(tenant.namespace, deployment(name, 1));
  stage.exporter.set(LOAD, { namespace: tenant.namespace, deployment: name }, 5);
  await tenant.tasks.create(
    tenant.namespace,
    loadTask(
      name,
      { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 0, maxAttempts: 10 },
      { decision: { mode: 'LLM', ...(llm !== undefined ? { llm } : {}) } },
    ),
  );
}

/** What lies outside the attacker's namespace, as far as an attack could change it. */
interface Outside {
  readonly nodes: string;
  readonly alice: string;
}

async function outside(stage: Stage): Promise<Outside> {
  const nodes = (await stage.nodes.list(undefined)).items.map((n) => ({
    name: n.metadata.name,
    unschedulable: n.spec?.unschedulable === true,
    annotations: Object.entries(n.metadata.annotations ?? {})
      .filter(([k]) => k.startsWith('aiops.example.com/'))
      .sort(),
  }));
  const workloads = await Promise.all(
    [Resources.deployments, Resources.statefulsets].map(async (resource) =>
      (await new ResourceClient<Workload>(stage.admin, resource).list(stage.alice.namespace)).items.map(
        (w) => ({
          kind: resource.plural,
          name: w.metadata.name,
          replicas: w.spec?.replicas,
          generation: w.metadata.generation,
        }),
      ),
    ),
  );
  const alice = workloads.flat();
  return { nodes: JSON.stringify(nodes), alice: JSON.stringify(alice) };
}

/**
 * Alice's bystander task: a Deployment `app` and an AITask `watch` on it that never breaches.
 * Returns a check, run after each attack, that the operator process never exited, nothing
 * outside mallory's namespace changed since this call, and alice's next spec change is
 * observed within `withinMs` (default 15 000: her task is not starved or stopped).
 */
export async function bystander(stage: Stage): Promise<(withinMs?: number) => Promise<void>> {
  await stage.alice.deployments.create(stage.alice.namespace, deployment('app', 1));
  stage.exporter.set(LOAD, { namespace: stage.alice.namespace, deployment: 'app' }, 1);
  const watch = loadTask(
    'app',
    { action: 'Noop' },
    { trigger: { query: `max(${LOAD}{deployment="app"})`, threshold: 1000 } },
  );
  await stage.alice.tasks.create(stage.alice.namespace, { ...watch, metadata: { name: 'watch' } });
  await eventually('alice watch observed', async () => {
    const t = await stage.alice.tasks.get(stage.alice.namespace, 'watch');
    return t.status?.observedGeneration === t.metadata.generation ? true : undefined;
  });
  const before = await outside(stage);
  let threshold = 1000;
  const running = (): void => {
    const child = stage.operator.child;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the operator exited (code ${child.exitCode}, signal ${child.signalCode})`);
  };
  return async (withinMs = 15_000) => {
    running();
    threshold += 1;
    const patched = await stage.alice.tasks.patch(stage.alice.namespace, 'watch', {
      spec: { trigger: { threshold } },
    });
    await eventually(
      `alice's change observed within ${withinMs} ms`,
      async () => {
        const t = await stage.alice.tasks.get(stage.alice.namespace, 'watch');
        const seen = (t.status?.observedGeneration ?? 0) >= (patched.metadata.generation ?? 1);
        return seen && t.status?.phase !== 'Paused' ? true : undefined;
      },
      withinMs,
    );
    const after = await outside(stage);
    if (after.nodes !== before.nodes) throw new Error(`nodes changed:\n${before.nodes}\n${after.nodes}`);
    if (after.alice !== before.alice)
      throw new Error(`alice's Deployments or StatefulSets changed:\n${before.alice}\n${after.alice}`);
    running();
  };
}
