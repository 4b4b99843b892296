// AITasks and their Deployments as the `operator` and `memory` bench sections create them:
// each AITask targets a paused Deployment of its own (no pods, so it costs one object), with
// a metric that never breaches, so every reconcile takes the full path (finalizer, revision,
// metric, status, Event) and then rests. Also the watch that says when they have converged.

import { AITaskClient } from '../../api/aitask-client.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type * as v2 from '../../api/schema/v2.ts';
import { Informer, objectKey } from '../../operator/runtime/informer.ts';
import { Resources, type Deployment, type KubeEvent } from '../../operator/runtime/kinds.ts';

/** Parallel requests that create and clean up fixtures (not measured). */
const SETUP_WIDTH = 32;

/** A Deployment as the bench writes it (`paused` is not among the operator's fields). */
interface BenchDeployment extends Deployment {
  spec: NonNullable<Deployment['spec']> & { paused: boolean };
}

/** The clients the bench sections write with. */
export interface Clients {
  readonly tasks: AITaskClient;
  readonly deployments: ResourceClient<BenchDeployment>;
  readonly namespaces: ResourceClient<{ metadata: { name: string } }>;
  readonly events: ResourceClient<KubeEvent>;
}

/** The bench's clients over `transport`. */
export function clients(transport: KubeTransport): Clients {
  return {
    tasks: new AITaskClient(transport, 'v2'),
    deployments: new ResourceClient(transport, Resources.deployments),
    events: new ResourceClient(transport, Resources.events),
    namespaces: new ResourceClient(transport, {
      group: '',
      version: 'v1',
      plural: 'namespaces',
      namespaced: false,
    }),
  };
}

/** Progress line on stderr, prefixed with the section's name. */
export const sayer =
  (section: string) =>
  (msg: string): void =>
    void process.stderr.write(`[bench ${section}] ${msg}\n`);

/** Whole MiB of `bytes`. */
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
/** Seconds with one decimal. */
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with `width` calls in flight. */
export async function pool<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

function task(i: number): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: `t-${i}` },
    spec: {
      target: { kind: 'Deployment', name: `web-${i}` },
      trigger: { query: 'vector(0)', threshold: 1 },
      remediation: { action: 'Noop' },
      intervalSeconds: 3600,
    },
  };
}

/** A paused Deployment `web-<i>`: the controller-manager makes no ReplicaSet for it, so it costs one object. */
export function deployment(i: number): BenchDeployment {
  const labels = { app: `web-${i}` };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `web-${i}` },
    spec: {
      replicas: 1,
      paused: true,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'a', image: 'nginx' }] } },
    },
  };
}

/** Creates namespace `ns`; returns it. */
export async function namespace(c: Clients, ns: string): Promise<string> {
  await c.namespaces.create(undefined, { metadata: { name: ns } });
  return ns;
}

/** Creates Deployments and AITasks number `from` to `to - 1` in `ns`, targeting each other one to one. */
export async function populate(c: Clients, ns: string, from: number, to: number): Promise<void> {
  const ids = Array.from({ length: to - from }, (_, i) => from + i);
  await pool(ids, SETUP_WIDTH, (i) => c.deployments.create(ns, deployment(i)));
  await pool(ids, SETUP_WIDTH, (i) => c.tasks.create(ns, task(i)));
}

/** Takes the finalizers off (no operator runs there any more) and deletes the namespace. */
export async function release(c: Clients, ns: string): Promise<void> {
  const list = await c.tasks.listAll(ns);
  await pool(list.items, SETUP_WIDTH, (o) =>
    c.tasks.patch(ns, o.metadata.name ?? '', { metadata: { finalizers: null } }),
  );
  await c.namespaces.delete(undefined, ns);
}

/**
 * Resolves once `n` AITasks of namespace `where` (or, given an object, of its namespace and
 * label selector) are converged, seen through a watch (no polling LISTs).
 */
export async function converged(
  tasks: AITaskClient,
  where: string | { readonly namespace?: string; readonly labelSelector?: string },
  n: number,
): Promise<void> {
  const cache = new Informer<v2.AITask>(tasks, typeof where === 'string' ? { namespace: where } : where);
  const done = new Set<string>();
  let resolve = (): void => undefined;
  const all = new Promise<void>((r) => (resolve = r));
  const see = (o: v2.AITask): void => {
    if (o.status?.phase !== undefined && o.status.observedGeneration === o.metadata.generation)
      done.add(objectKey(o));
    else done.delete(objectKey(o));
    if (done.size >= n) resolve();
  };
  cache.on({ add: see, update: (_old, o) => see(o) });
  await cache.start();
  await all;
  await cache.stop();
}
