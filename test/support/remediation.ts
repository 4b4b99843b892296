// Fixtures for the operator's remediation integration tests: a real Prometheus scraping a
// test-controlled exporter, typed clients of the shared cluster, and builders of the
// Deployments and v2 AITasks the tests create. Each test still works in its own namespace.

import { after, before } from 'node:test';
import { ResourceClient } from '../../lib/kube/resources.ts';
import type * as v2 from '../../api/schema/v2.ts';
import {
  Resources,
  type Deployment,
  type KubeEvent,
  type Node,
  type Pod,
} from '../../operator/runtime/kinds.ts';
import { testAITasks, testTransport } from './cluster.ts';
import { eventually, startOperatorProcess, type OperatorProcess } from './operator.ts';
import {
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '../../scripts/lib/prometheus.ts';

/** The gauge every remediation test reads, one series per test. */
export const GAUGE = 'aiops_test_load';

/** A Prometheus with its exporter. */
export interface Metrics {
  readonly prometheus: Prometheus;
  readonly exporter: Exporter;
  /** Sets `series` and waits until Prometheus answers with it. */
  set(series: string, value: number | undefined): Promise<void>;
  stop(): Promise<void>;
}

/** Starts an exporter and a Prometheus scraping it every second. */
export async function startMetrics(): Promise<Metrics> {
  const exporter = await startExporter();
  const prometheus = await startPrometheus([exporter.address]);
  return {
    prometheus,
    exporter,
    async set(series, value) {
      exporter.set(GAUGE, { series }, value);
      await eventually(`Prometheus to see ${series}=${value}`, async () =>
        (await prometheus.query(`${GAUGE}{series="${series}"}`)) === value ? true : undefined,
      );
    },
    async stop() {
      await prometheus.stop();
      await exporter.close();
    },
  };
}

/**
 * Registers before/after hooks that start Metrics for the calling test file and stop them
 * when it ends; the returned object delegates to them (and throws if used outside a test).
 */
export function metricsForFile(): Metrics {
  let m: Metrics | undefined;
  before(async () => {
    m = await startMetrics();
  });
  after(async () => {
    await m?.stop();
  });
  const live = (): Metrics => {
    if (m === undefined) throw new Error('metrics start in before(): use them inside a test');
    return m;
  };
  return {
    get prometheus() {
      return live().prometheus;
    },
    get exporter() {
      return live().exporter;
    },
    set: (series, value) => live().set(series, value),
    stop: () => live().stop(),
  };
}

/** Typed clients of the shared cluster. */
export async function clients() {
  const t = await testTransport();
  return {
    transport: t,
    tasks: await testAITasks('v2'),
    deployments: new ResourceClient<Deployment>(t, Resources.deployments),
    pods: new ResourceClient<Pod>(t, Resources.pods),
    nodes: new ResourceClient<Node>(t, Resources.nodes),
    events: new ResourceClient<KubeEvent>(t, Resources.events),
  };
}

/** A v2 AITask on Deployment `target` reading the gauge's `series`, evaluated every 10 s. */
export function aitask(
  name: string,
  target: string,
  series: string,
  remediation: v2.Spec['remediation'],
  spec: Partial<v2.Spec> = {},
): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: {
      target: { kind: 'Deployment', name: target },
      trigger: { query: `${GAUGE}{series="${series}"}`, threshold: 1 },
      remediation,
      intervalSeconds: 10,
      ...spec,
    },
  };
}

/** Starts an operator watching only `ns` with `args` and `env` added, stopped when the test ends. */
export async function operatorFor(
  ns: string,
  prometheusUrl: string,
  t: { after: (fn: () => Promise<void>) => void },
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<OperatorProcess> {
  const op = await startOperatorProcess(
    [`--namespace=${ns}`, `--prometheus-url=${prometheusUrl}`, ...args],
    env,
  );
  t.after(async () => {
    await op.stop();
  });
  return op;
}

/** The operator's Events in `ns` about AITask `name` (all AITasks when omitted), oldest first. */
export async function taskEvents(ns: string, name?: string): Promise<KubeEvent[]> {
  const { events } = await clients();
  return (await events.list(ns)).items
    .filter((e) => e.regarding.kind === 'AITask' && (name === undefined || e.regarding.name === name))
    .sort((a, b) => a.eventTime.localeCompare(b.eventTime));
}

/**
 * When an AITask held a remediation slot, from its Events (oldest first): each decision to
 * act (ThresholdBreached) until the first later Event of its grant ending — the task waits
 * out its cooldown (Cooldown), stalls (MaxAttemptsReached) or its target recovers
 * (Remediated); `open` ends one still held. Each interval lies within a real grant (the
 * grant is taken before the decision's Event and released after the ending Event).
 */
export function slotIntervals(events: readonly KubeEvent[], open = '9999'): [string, string][] {
  const ends = new Set(['Cooldown', 'MaxAttemptsReached', 'Remediated']);
  const out: [string, string][] = [];
  events.forEach((e, i) => {
    if (e.reason !== 'ThresholdBreached') return;
    const end = events.slice(i + 1).find((x) => ends.has(x.reason));
    out.push([e.eventTime, end?.eventTime ?? open]);
  });
  return out;
}

/** The largest number of [start, end] intervals open at once (an end sorts before a start at the same time). */
export function maxOverlap(intervals: readonly (readonly [string, string])[]): number {
  const points = intervals.flatMap(([s, e]) => [[s, 1] as const, [e, -1] as const]);
  points.sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of points) {
    open += d;
    max = Math.max(max, open);
  }
  return max;
}
