// The operator process (cmd/operator.ts) with every tunable flag no other test sets given a
// value other than its default, each asserted where its effect shows on the cluster:
// --context (the kubeconfig's current context leads nowhere), --default-query (what a
// stand-in Prometheus is asked), --default-interval-seconds (how often it is asked),
// --default-cooldown-seconds / --default-max-attempts / --default-min-replicas /
// --default-max-replicas (the guardrail each AITask without the field reports),
// --allow-cross-namespace (a target in another namespace is acted on), --llm-calls-per-hour
// (the second LLM call is refused operator-wide), --leader-election-id (the Lease it holds).
// --rate-limit-qps/-burst pace retries after failures, --webhook-service names and
// --cert-sync-interval re-checks the --self-signed-cert certificate, which would rewrite the
// shared CRD's caBundle: for these three the process is only seen to accept the value.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dump, load } from 'js-yaml';
import type * as v2 from '../../api/schema/v2.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { findCondition } from '../../api/status/conditions.ts';
import { freshNamespace, testKubeconfig } from '../support/cluster.ts';
import { eventually, startOperatorProcess } from '../support/operator.ts';
import { clients } from '../support/remediation.ts';
import { startLLMServer } from '../support/llm-server.ts';
import { deployment } from '../support/workloads.ts';

/** One instant query a stand-in Prometheus received, and when. */
interface Query {
  readonly query: string;
  readonly at: number;
}

/** A stand-in Prometheus: records each instant query and answers it with one sample of `value`. */
async function fakePrometheus(
  value: number,
): Promise<{ url: string; queries: Query[]; close(): Promise<void> }> {
  const queries: Query[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    queries.push({ query: url.searchParams.get('query') ?? '', at: Date.now() });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, String(value)] }] },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queries,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

/**
 * The admin kubeconfig with its context copied as `name` and a current context that points
 * at a port nothing listens on: only an operator that honours --context=`name` gets anywhere.
 */
function kubeconfigWithContext(dir: string, name: string): string {
  const cfg = load(readFileSync(testKubeconfig(), 'utf8')) as Kubeconfig;
  const current = cfg.contexts.find((c) => c.name === cfg['current-context']);
  assert.ok(current, 'the admin kubeconfig has a current context');
  cfg.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
  cfg.contexts.push({ name, context: current.context });
  cfg.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: current.context.user } });
  cfg['current-context'] = 'nowhere';
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, dump(cfg));
  return path;
}

interface Lease {
  metadata: { name: string };
  spec?: { holderIdentity?: string };
}

test('each tunable operator flag, set to a non-default value, has its effect', async (t) => {
  const ns = await freshNamespace('flags', (fn) => t.after(fn));
  const far = await freshNamespace('flags-far', (fn) => t.after(fn));
  const c = await clients();
  const prometheus = await fakePrometheus(0.9);
  t.after(() => prometheus.close());
  const llm = await startLLMServer({ status: 500, message: 'overloaded' });
  t.after(() => llm.close());
  const dir = mkdtempSync(join(tmpdir(), 'aiops-flags-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  // One Deployment per guardrail, so each AITask shows one flag's effect.
  for (const [name, replicas] of [
    ['cool', 2],
    ['full', 3],
    ['low', 2],
    ['once', 1],
    ['ask', 1],
  ] as const)
    await c.deployments.create(ns, deployment(name, replicas));
  await c.deployments.create(far, deployment('remote', 1));
  const selector = `aiops-flags-test=${ns}`;
  const task = (
    name: string,
    target: v2.Spec['target'],
    remediation: v2.Spec['remediation'],
    extra: Partial<v2.Spec> = {},
  ): v2.AITask => ({
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, labels: { 'aiops-flags-test': ns } },
    // No query, no intervalSeconds: the operator's defaults apply.
    spec: { target, trigger: { threshold: 0.5 }, remediation, ...extra },
  });
  const tasks = [
    // ScaleUp 2 → 3 (max 3 by default here), then the default cooldown (1 h) holds it.
    task('cool', { kind: 'Deployment', name: 'cool' }, { action: 'ScaleUp', maxAttempts: 5 }),
    task('full', { kind: 'Deployment', name: 'full' }, { action: 'ScaleUp' }),
    task('low', { kind: 'Deployment', name: 'low' }, { action: 'ScaleDown' }),
    // One action, no cooldown: the next breach finds the default maxAttempts (1) spent.
    task('once', { kind: 'Deployment', name: 'once' }, { action: 'ScaleUp', cooldownSeconds: 0 }),
    task('cross', { kind: 'Deployment', name: 'remote', namespace: far }, { action: 'Noop' }),
    task(
      'ask',
      { kind: 'Deployment', name: 'ask' },
      { action: 'ScaleUp', scale: { maxReplicas: 10 }, cooldownSeconds: 0, maxAttempts: 10 },
      { decision: { mode: 'LLM', llm: { endpoint: llm.endpoint } } },
    ),
  ];
  for (const o of tasks) await c.tasks.create(ns, o);

  const op = await startOperatorProcess(
    [
      '--context=aiops-flags',
      `--prometheus-url=${prometheus.url}`,
      `--watch-label-selector=${selector}`,
      '--default-query=flags_load{ns="{{namespace}}",dep="{{name}}"}',
      '--default-interval-seconds=10',
      '--default-cooldown-seconds=3600',
      '--default-max-attempts=1',
      '--default-min-replicas=2',
      '--default-max-replicas=3',
      '--allow-cross-namespace',
      `--llm-endpoint-allowlist=${new URL(llm.endpoint).origin}/v1/`,
      '--llm-calls-per-hour=1',
      '--llm-namespace-calls-per-hour=5',
      '--leader-elect',
      `--leader-election-namespace=${ns}`,
      '--leader-election-id=flags-leader',
      '--rate-limit-qps=3',
      '--rate-limit-burst=7',
      '--webhook-service=flags-webhook',
      '--cert-sync-interval=120',
    ],
    {},
    // The admin identity: --context needs a kubeconfig of several contexts, and the shipped
    // Role grants the Lease by its shipped name only (see --leader-election-id's help).
    { kubeconfig: kubeconfigWithContext(dir, 'aiops-flags') },
  );
  t.after(async () => {
    await op.stop();
  });

  const status = async (name: string): Promise<v2.Status | undefined> => (await c.tasks.get(ns, name)).status;
  const until = (what: string, name: string, check: (s: v2.Status) => boolean): Promise<v2.Status> =>
    eventually(
      what,
      async () => {
        const s = await status(name);
        return s !== undefined && check(s) ? s : undefined;
      },
      90_000,
    );

  // --context: the current context leads nowhere, yet the operator leads and acts.
  const lease = await eventually('the Lease named by --leader-election-id', async () => {
    const leases = new ResourceClient<Lease>(c.transport, {
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      namespaced: true,
    });
    const l = await leases.get(ns, 'flags-leader').catch(() => undefined);
    return l?.spec?.holderIdentity ? l : undefined;
  });
  assert.ok(lease.spec?.holderIdentity, 'the operator holds the Lease it was told to');

  // --default-query: the target's namespace and name in the template, for each task.
  await eventually('a query for every target', () =>
    Promise.resolve(
      ['cool', 'full', 'low', 'once', 'ask'].every((d) =>
        prometheus.queries.some((q) => q.query === `flags_load{ns="${ns}",dep="${d}"}`),
      ) || undefined,
    ),
  );
  // --allow-cross-namespace: the target in the other namespace is read and acted on.
  const cross = await until('the cross-namespace Noop', 'cross', (s) => s.lastDecision?.action === 'Noop');
  assert.ok(prometheus.queries.some((q) => q.query === `flags_load{ns="${far}",dep="remote"}`));
  assert.doesNotMatch(JSON.stringify(cross), /CrossNamespaceRefused/);

  // --default-max-replicas 3 / --default-min-replicas 2: the bounds of tasks without scale.
  const full = await until('AtMaxReplicas', 'full', (s) => s.lastDecision?.blockedBy === 'AtMaxReplicas');
  assert.match(full.message ?? '', /already at 3 replicas \(max 3\)/);
  const low = await until('AtMinReplicas', 'low', (s) => s.lastDecision?.blockedBy === 'AtMinReplicas');
  assert.match(low.message ?? '', /already at 2 replicas \(min 2\)/);

  // --default-cooldown-seconds 3600: after ScaleUp 2 → 3 the task cools down for an hour.
  const cool = await until(
    'Cooldown',
    'cool',
    (s) => findCondition(s.conditions, 'RemediationAllowed')?.reason === 'Cooldown',
  );
  assert.equal((await c.deployments.get(ns, 'cool')).spec?.replicas, 3);
  const until3600 = new Date(Date.parse(cool.lastExecutionTime ?? '') + 3_600_000).toISOString();
  assert.match(cool.message ?? '', new RegExp(`cooling down until ${until3600.replace(/\.\d+Z$/, '')}`));

  // --default-max-attempts 1: one ScaleUp, then Failed with MaxAttemptsReached.
  const once = await until('MaxAttemptsReached', 'once', (s) => s.phase === 'Failed');
  assert.match(JSON.stringify(once.conditions), /MaxAttemptsReached/);
  assert.equal((await c.deployments.get(ns, 'once')).spec?.replicas, 2, 'exactly one action');

  // --llm-calls-per-hour 1: one call reaches the LLM; the next is refused operator-wide.
  await until('the operator-wide LLM budget used up', 'ask', (s) =>
    /operator-wide LLM call budget is used up/.test(JSON.stringify(s)),
  );
  assert.equal(llm.requests.length, 1, 'one LLM call in the hour');

  // --default-interval-seconds 10: 'full' is asked again every ~10 s (the default is 60 s).
  const fullQuery = `flags_load{ns="${ns}",dep="full"}`;
  await eventually('three queries of full', () =>
    Promise.resolve(prometheus.queries.filter((q) => q.query === fullQuery).length >= 3 || undefined),
  );
  const times = prometheus.queries.filter((q) => q.query === fullQuery).map((q) => q.at);
  const gaps = times.slice(1).map((at, i) => at - (times[i] ?? at));
  for (const gap of gaps.slice(1))
    assert.ok(gap >= 8_000 && gap <= 20_000, `reconciles of full ${gaps.join(', ')} ms apart`);

  assert.equal(await op.stop(), 0, 'the process accepted every flag and stopped cleanly');
});
