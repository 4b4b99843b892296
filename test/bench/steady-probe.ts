// What bench section `steady` (steady.ts) reads, all from the servers' own counters: the
// apiserver's requests of the controller under test by verb, told apart by its identity (a
// ServiceAccount only it uses, and one API Priority and Fairness FlowSchema per verb matching
// that ServiceAccount, so apiserver_flowcontrol_dispatched_requests_total{flow_schema} counts
// its requests and no one else's: apiserver_request_total has no user or user-agent label);
// the leader election's Lease requests are counted apart (a FlowSchema of their own, matched
// first), so the verbs say what the AITasks cost; Prometheus' own count of instant queries; and the controller's /metrics histograms
// (reconcile time, evaluation lateness) with their quantiles over a window.

import { readFileSync } from 'node:fs';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import { serviceAccountKubeconfig } from '../support/operator-identity.ts';
import { sleep } from './fixtures.ts';
import { metricsText } from './peer-procs.ts';

/** Verbs counted, one FlowSchema each. */
export const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof VERBS)[number];
/** What flowRequests counts: requests by verb, Lease requests (any verb) apart. */
export type Counted = Verb | 'lease';
/** Verbs that write. */
export const WRITES: readonly Verb[] = ['create', 'update', 'patch', 'delete'];

/** The bench controllers' ServiceAccount and the prefix of its FlowSchemas. */
const IDENTITY = { namespace: 'aiops-bench-steady', name: 'aiops-bench-steady' } as const;
const FLOW_PREFIX = 'aiops-bench-steady-';
/** Where the FlowSchemas send the requests: the level the default `service-accounts` schema uses. */
const PRIORITY_LEVEL = 'workload-low';
const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';

async function apply(admin: KubeTransport, path: string, object: object): Promise<void> {
  await admin.request({
    method: 'PATCH',
    path,
    patchType: 'apply',
    query: { fieldManager: 'aiops-bench', force: true },
    body: object,
  });
}

/**
 * As `admin`: the bench's ServiceAccount, bound to cluster-admin (both controllers run as it,
 * one after the other, so RBAC is alike for both and beside the point), and one FlowSchema
 * per verb matching it; waits (60 s deadline) until the apiserver counts the ServiceAccount's
 * GETs under its schema. Returns a kubeconfig for the ServiceAccount written to
 * `<dir>/steady.kubeconfig`. Idempotent.
 */
export async function installBenchIdentity(
  admin: KubeTransport,
  adminKubeconfig: string,
  dir: string,
  connect: (kubeconfig: string) => Promise<KubeTransport>,
): Promise<string> {
  const { namespace, name } = IDENTITY;
  await apply(admin, `/api/v1/namespaces/${namespace}`, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  await apply(admin, `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace },
  });
  await apply(admin, `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', namespace, name }],
  });
  const schemas: [Counted, { apiGroups: string[]; resources: string[]; verbs: string[] }][] = [
    ['lease', { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'] }],
    ...VERBS.map((v): [Counted, { apiGroups: string[]; resources: string[]; verbs: string[] }] => [
      v,
      { apiGroups: ['*'], resources: ['*'], verbs: [v] },
    ]),
  ];
  for (const [i, [counted, rule]] of schemas.entries())
    await apply(admin, `${FLOWCONTROL}/flowschemas/${FLOW_PREFIX}${counted}`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: `${FLOW_PREFIX}${counted}` },
      spec: {
        // Before every suggested schema but `exempt` and `probes`, none of which names this
        // account; the Lease schema first.
        matchingPrecedence: 50 + i,
        priorityLevelConfiguration: { name: PRIORITY_LEVEL },
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace, name } }],
            resourceRules: [{ ...rule, namespaces: ['*'], clusterScope: true }],
          },
        ],
      },
    });
  const kubeconfig = await serviceAccountKubeconfig(
    admin,
    adminKubeconfig,
    namespace,
    name,
    `${dir}/steady.kubeconfig`,
  );
  const self = await connect(kubeconfig);
  const deadline = Date.now() + 60_000;
  while ((await flowRequests(admin)).get === 0) {
    if (Date.now() > deadline)
      throw new Error('the apiserver does not count the bench identity under its FlowSchemas');
    await self.request({ path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}` });
    await sleep(250);
  }
  return kubeconfig;
}

/**
 * The bench identity's requests so far by verb, Lease requests apart
 * (apiserver_flowcontrol_dispatched_requests_total).
 */
export async function flowRequests(admin: KubeTransport): Promise<Record<Counted, number>> {
  const out = Object.fromEntries([...VERBS, 'lease'].map((v) => [v, 0])) as Record<Counted, number>;
  await admin.stream({ path: '/metrics' }, (line) => {
    if (!line.startsWith('apiserver_flowcontrol_dispatched_requests_total{')) return;
    const schema = /[{,]flow_schema="([^"]*)"/.exec(line)?.[1] ?? '';
    if (!schema.startsWith(FLOW_PREFIX)) return;
    const verb = schema.slice(FLOW_PREFIX.length) as Counted;
    if (verb in out) out[verb] += Number(line.slice(line.lastIndexOf(' ') + 1));
  });
  return out;
}

/** CPU time (user + system) the main thread of `pid` has used so far, in ms (its other threads left out). */
export function mainThreadCpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Prometheus' own count of requests to its instant-query endpoint (prometheus_http_requests_total). */
export async function prometheusQueries(prometheusUrl: string): Promise<number> {
  const text = await metricsText(`${prometheusUrl.replace(/\/$/, '')}/metrics`);
  return sumSeries(text, 'prometheus_http_requests_total', (labels) =>
    labels.includes('handler="/api/v1/query"'),
  );
}

/** Sum of the samples of `name` (exact family member, not its _bucket etc.) whose labels pass `keep`. */
export function sumSeries(
  text: string,
  name: string,
  keep: (labels: string) => boolean = () => true,
): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length, line.lastIndexOf('}') + 1) : '';
    if (keep(labels)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Cumulative bucket counts of histogram `name` by upper bound (`le`), summed over its series. */
export type Buckets = ReadonlyMap<number, number>;

/** The buckets of histogram `name` in a /metrics `text`, all series added up; empty when absent. */
export function histogram(text: string, name: string): Buckets {
  const out = new Map<number, number>();
  const prefix = `${name}_bucket{`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const le = /[{,]le="([^"]*)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** `after - before`, bucket by bucket: the observations made between two reads. */
export function bucketDelta(before: Buckets, after: Buckets): Buckets {
  return new Map([...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)]));
}

/** Observations in `b` (its +Inf bucket). */
export function observations(b: Buckets): number {
  return b.get(Number.POSITIVE_INFINITY) ?? 0;
}

/**
 * The q-quantile (0..1) of the observations in `b`, interpolated linearly within its bucket
 * as PromQL's histogram_quantile does (the +Inf bucket answers with the highest finite
 * bound); NaN when there are none.
 */
export function quantile(b: Buckets, q: number): number {
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const total = observations(b);
  if (total <= 0 || bounds.length === 0) return Number.NaN;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const bound of bounds) {
    const count = b.get(bound) ?? 0;
    if (count >= rank) {
      if (bound === Number.POSITIVE_INFINITY) return prevBound;
      if (count === prevCount) return bound;
      return prevBound + ((bound - prevBound) * (rank - prevCount)) / (count - prevCount);
    }
    prevBound = bound;
    prevCount = count;
  }
  return prevBound;
}
