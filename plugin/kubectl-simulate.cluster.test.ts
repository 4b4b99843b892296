// Integration test of `kubectl aiops simulate` through the real kubectl, against a real
// Prometheus holding 7 days of 15-second samples (written in time order through its
// remote-write receiver) in which breaches are planted: the replay over the 7 days finds
// exactly the planted actions, the maxAttempts stop and nothing for a breach shorter than
// forSeconds; the task and its target's replicas come from the cluster. Through the
// apiserver's service proxy, Prometheus answers with the user's credentials: an impersonated
// user without get on services/proxy is refused in one line; with no flag, the Service the
// installed operator's Deployment names (as the shipped manifests and `helm --set
// prometheus.url` give it) is found, AIOPS_PROMETHEUS_URL in the user's environment comes
// before it and after the flags, and a user who may not read that Deployment is told in one
// line which flag to pass; the Service's endpoint is a TEST-NET-2 address on a link the
// test makes and removes (test/support/test-net-address.ts). Bad input gets one line and the
// plugin's exit codes: a query the operator would refuse (3), an unknown task (1), a window
// with no data (1), --from after --to (2), an apiserver --server names that does not answer (1);
// completion knows the command; -o yaml gives the -o json document.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { DEFAULT_INSTALL } from '../api/install.ts';
import type * as v2 from '../api/schema/v2.ts';
import { AlreadyExistsError } from '../lib/kube/errors.ts';
import { ResourceClient } from '../lib/kube/resources.ts';
import { fromYaml } from '../lib/yaml.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';
import { startDataPrometheus, type DataPrometheus } from '../test/support/prometheus-data.ts';
import { testNetAddress } from '../test/support/test-net-address.ts';
import { deployment } from '../test/support/workloads.ts';
import type { LiveDeployment } from './approval-plan.ts';
import { Resources } from './kinds.ts';
import type { SimulationView } from './simulate-text.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STEP_S = 15;

interface OperatorDeployment {
  metadata: { name: string };
  spec: {
    template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } };
  };
}
const DAY_S = 86_400;
/** The window: 7 days on a whole hour, ending an hour or more before now. */
const BASE_S = Math.floor(Date.now() / 3_600_000) * 3600 - 7 * DAY_S - 3600;
const at = (day: number, hh: number, mm: number): number => BASE_S + day * DAY_S + hh * 3600 + mm * 60;
const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/** Planted breaches (value 0.95; 0.2 otherwise), [start, end) in seconds, and a gap without samples. */
const BREACHES: readonly (readonly [number, number])[] = [
  [at(1, 3, 12), at(1, 3, 22)], // one ScaleUp two minutes in
  [at(3, 10, 0), at(3, 10, 5)], // one more
  [at(5, 20, 0), at(5, 20, 40)], // three ScaleUps ten minutes apart, then maxAttempts: Failed
  [at(6, 8, 0), at(6, 8, 1) + 30], // 90 s: shorter than forSeconds, no action
];
const GAP: readonly [number, number] = [at(2, 0, 0), at(2, 0, 30)];

let PATH = '';
let KC = '';
let prometheus: DataPrometheus;
const run = (args: readonly string[], env: Record<string, string> = {}): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC, AIOPS_PROMETHEUS_URL: '', ...env });

const spec: v2.Spec = {
  target: { kind: 'Deployment', name: 'web' },
  intervalSeconds: 60,
  trigger: { query: 'max(demo_load{deployment="web"})', threshold: 0.8, forSeconds: 120 },
  remediation: {
    action: 'ScaleUp',
    scale: { step: 1, minReplicas: 1, maxReplicas: 10 },
    cooldownSeconds: 600,
    maxAttempts: 3,
  },
};

/** Creates the AITask `name` in `namespace`. */
async function createTask(namespace: string, name: string, s: v2.Spec): Promise<void> {
  await (
    await testAITasks('v2')
  ).create(namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name },
    spec: s,
  });
}

/**
 * Writes the 7 days of `demo_load` for each of `namespaces` in one pass, in time order (an
 * older sample after a newer one is out of bounds); resolves to the samples of each.
 */
async function plant(namespaces: readonly string[]): Promise<number> {
  const samples: [number, number][] = [];
  for (let s = BASE_S; s <= BASE_S + 7 * DAY_S; s += STEP_S) {
    if (s >= GAP[0] && s < GAP[1]) continue;
    samples.push([s * 1000, BREACHES.some(([from, to]) => s >= from && s < to) ? 0.95 : 0.2]);
  }
  for (let i = 0; i < samples.length; i += 2000)
    await prometheus.write(
      namespaces.map((namespace) => ({
        labels: { __name__: 'demo_load', namespace, deployment: 'web' },
        samples: samples.slice(i, i + 2000),
      })),
    );
  return samples.length;
}

/**
 * The operator's Deployment as the shipped manifests install it (deploy/aiops-operator.yaml),
 * at 0 replicas, with AIOPS_PROMETHEUS_URL=`url` as `helm install --set prometheus.url` or
 * `kubectl set env` gives it; in the operator's namespace, created when missing (the namespace
 * is left: other tests use it). Registers its removal with `cleanup`.
 */
async function installedOperator(url: string, cleanup: (fn: () => Promise<void>) => void): Promise<void> {
  const { namespace, deployment: name } = DEFAULT_INSTALL;
  const shipped = loadAll(readFileSync(join(ROOT, 'deploy/aiops-operator.yaml'), 'utf8')).find(
    (d): d is OperatorDeployment => (d as { kind?: unknown }).kind === 'Deployment',
  );
  assert.ok(shipped, 'the shipped manifests hold the Deployment');
  const [container, ...others] = shipped.spec.template.spec.containers;
  assert.ok(container);
  const transport = await testTransport();
  await transport
    .request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: namespace } } })
    .catch((err: unknown) => {
      if (!(err instanceof AlreadyExistsError)) throw err;
    });
  const env = [...(container.env ?? []), { name: 'AIOPS_PROMETHEUS_URL', value: url }];
  const spec = {
    ...shipped.spec,
    replicas: 0,
    template: {
      ...shipped.spec.template,
      spec: { ...shipped.spec.template.spec, containers: [{ ...container, env }, ...others] },
    },
  };
  await transport.request({
    method: 'POST',
    path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
    body: { ...shipped, metadata: { ...shipped.metadata, namespace }, spec },
  });
  cleanup(async () => {
    await transport.request({
      method: 'DELETE',
      path: `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
    });
  });
}

/** The namespaces of the two tests that read the planted history, and the samples of each. */
let planted = { replay: '', proxy: '', written: 0 };
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
  prometheus = await startDataPrometheus();
  const replay = await freshNamespace('plugin-simulate', (fn) => cleanups.push(fn));
  const proxy = await freshNamespace('plugin-simulate-proxy', (fn) => cleanups.push(fn));
  planted = { replay, proxy, written: await plant([replay, proxy]) };
});
after(async () => {
  await prometheus.stop();
  for (const cleanup of cleanups) await cleanup();
});

void describe('kubectl aiops simulate', () => {
  test('over 7 days of 15 s samples: exactly the planted actions, the Failed stop, the gap as no data', async (t) => {
    const { replay: ns, written } = planted;
    await new ResourceClient<LiveDeployment>(await testTransport(), Resources.deployments).create(
      ns,
      deployment('web', 2),
    );
    await createTask(ns, 'web-load', spec);
    const window = [
      '--from',
      iso(BASE_S),
      '--to',
      iso(BASE_S + 7 * DAY_S),
      '--prometheus-url',
      prometheus.url,
    ];

    const started = performance.now();
    const json = await run(['simulate', 'web-load', '-n', ns, ...window, '-o', 'json']);
    const ms = performance.now() - started;
    assert.equal(json.code, 0, json.stderr);
    t.diagnostic(`simulate over 7 days (${written} samples): ${Math.round(ms)} ms`);
    const view = JSON.parse(json.stdout) as SimulationView;
    assert.equal(
      view.samples,
      written + 19,
      'each 15 s point of the window; the last sample answers for less than 5 min into the gap',
    );
    assert.match(view.query, /namespace="/, 'the query confined to the namespace');
    const acts = view.changes.filter((c) => c.verdict.kind === 'act').map((c) => [c.time, c.decision]);
    assert.deepEqual(acts, [
      [iso(at(1, 3, 14)), 'ScaleUp 2 → 3'],
      [iso(at(3, 10, 2)), 'ScaleUp 3 → 4'],
      [iso(at(5, 20, 2)), 'ScaleUp 4 → 5'],
      [iso(at(5, 20, 12)), 'ScaleUp 5 → 6'],
      [iso(at(5, 20, 22)), 'ScaleUp 6 → 7'],
    ]);
    assert.equal(view.omitted, 0);
    assert.deepEqual(view.summary.actions, { ScaleUp: 5 });
    assert.equal(view.summary.firstAction, iso(at(1, 3, 14)));
    assert.equal(view.summary.lastAction, iso(at(5, 20, 22)));
    assert.equal(
      view.summary.failedAt,
      iso(at(5, 20, 22)),
      'the third attempt is followed by Failed at once',
    );
    assert.deepEqual(view.summary.replicas, { start: 2, end: 7 });
    assert.equal(view.summary.noData, 25, 'the gap, less the 5 min the last sample answers for');
    assert.ok(
      view.changes.some((c) => c.time === iso(at(6, 8, 0)) && c.verdict.kind === 'breachPending'),
      'the short breach is seen',
    );
    assert.ok(
      view.changes.some((c) => c.time === iso(at(5, 20, 40)) && c.phase === 'Healed'),
      'healed when the metric recovers',
    );

    const text = await run(['simulate', 'web-load', '-n', ns, ...window, '--color', 'always'], {
      NO_COLOR: '1',
      COLUMNS: '120',
    });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^AITask ${ns}/web-load replayed over ${iso(BASE_S)} → `, 'm'));
    assert.match(text.stdout, /^Would do: +5 ScaleUp \(first .*\); replicas 2 → 7$/m);
    assert.match(
      text.stdout,
      new RegExp(`^Failed: +at ${iso(at(5, 20, 22))} \\(maxAttempts reached\\)$`, 'm'),
    );
    assert.match(text.stdout, /^The recorded metric is replayed as it was: /m);
    assert.match(text.stdout, new RegExp(`^${iso(at(3, 10, 2))} +0\\.95 +Healing +ScaleUp 3 → 4 +4$`, 'm'));
    assert.ok(!text.stdout.includes('\u001b['), 'NO_COLOR wins over --color always');
    assert.match(
      text.stdout,
      /^ +\* metric {3}# in breach {3}- threshold > 0\.8 {3}\^ action$/m,
      'the chart',
    );
    const plot = text.stdout.split('\n').filter((l) => /^ *[\d.-]* \|/.test(l));
    assert.equal(plot.length, 8, 'eight rows of plot');
    assert.ok(plot.some((l) => l.length > 100) && plot.every((l) => l.length <= 120), 'as wide as $COLUMNS');

    const yaml = await run(['simulate', 'web-load', '-n', ns, ...window, '-o', 'yaml']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.deepEqual(
      (fromYaml(yaml.stdout) as SimulationView).summary,
      view.summary,
      '-o yaml: the same document',
    );

    const fewer = await run(['simulate', 'web-load', '-n', ns, ...window, '--replicas', '6', '-o', 'json']);
    const capped = JSON.parse(fewer.stdout) as SimulationView;
    assert.deepEqual(
      capped.summary.actions,
      { ScaleUp: 4 },
      'from 6 replicas the fourth reaches maxReplicas',
    );
  });

  test("through the apiserver's service proxy with the user's credentials", async (t) => {
    // The apiserver proxies to no loopback address: a relay on an address of a link this test
    // makes (TEST-NET-2, one the machine neither holds nor reaches on a link) passes each
    // request on to the real Prometheus, and takes only the host's own connections to it.
    const { ip } = testNetAddress((fn) => t.after(fn));
    const { proxy: ns, written } = planted;
    const relay = createServer((req, res) => {
      if (req.socket.remoteAddress !== ip) {
        res.destroy();
        return;
      }
      void fetch(`${prometheus.url}${req.url ?? '/'}`).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(await r.text());
      });
    });
    await new Promise<void>((r) => relay.listen(0, ip, r));
    t.after(() => relay.close());
    const address = relay.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const transport = await testTransport();
    const create = (kind: string, plural: string, object: Record<string, unknown>) =>
      transport.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/${plural}`,
        body: { apiVersion: 'v1', kind, ...object },
      });
    await create('Service', 'services', {
      metadata: { name: 'prom' },
      spec: { ports: [{ name: 'web', port: 9090 }] },
    });
    // The proxy dials only an endpoint address of a Pod that has it: a Pod never scheduled
    // (a scheduling gate) with the relay's address as its own, and the Service's Endpoints.
    await create('Pod', 'pods', {
      metadata: { name: 'prom-relay' },
      spec: {
        schedulingGates: [{ name: 'aiops.example.com/never' }],
        containers: [{ name: 'relay', image: 'registry.example.com/relay:1.0' }],
      },
    });
    await transport.request({
      method: 'PATCH',
      patchType: 'merge',
      path: `/api/v1/namespaces/${ns}/pods/prom-relay/status`,
      body: { status: { podIP: ip, podIPs: [{ ip }] } },
    });
    await create('Endpoints', 'endpoints', {
      metadata: { name: 'prom' },
      subsets: [
        {
          addresses: [{ ip, targetRef: { kind: 'Pod', namespace: ns, name: 'prom-relay' } }],
          ports: [{ name: 'web', port }],
        },
      ],
    });
    await createTask(ns, 'web-load', spec);
    const args = ['simulate', 'web-load', '-n', ns, '--from', iso(BASE_S), '--to', iso(BASE_S + 7 * DAY_S)];
    const viaProxy = ['--replicas', '2', '--prometheus-service', `${ns}/prom:9090`];
    const proxied = await run([...args, ...viaProxy, '-o', 'json']);
    assert.equal(proxied.code, 0, proxied.stderr);
    const view = JSON.parse(proxied.stdout) as SimulationView;
    assert.equal(view.samples, written + 19);
    assert.deepEqual(view.summary.actions, { ScaleUp: 5 });
    assert.match(
      view.prometheus,
      new RegExp(`^service ${ns}/prom:9090 \\(through the apiserver's service proxy\\)$`),
    );
    const direct = { AIOPS_PROMETHEUS_URL: prometheus.url };
    const flagWins = await run([...args, ...viaProxy, '-o', 'json'], direct);
    assert.equal(flagWins.code, 0, flagWins.stderr);
    assert.equal(
      (JSON.parse(flagWins.stdout) as SimulationView).prometheus,
      view.prometheus,
      'the flag wins',
    );

    // A task from a file: nothing but Prometheus is read, with the impersonated user's rights.
    const file = join(mkdtempSync(join(tmpdir(), 'aiops-simulate-')), 'task.yaml');
    t.after(() => rmSync(dirname(file), { recursive: true, force: true }));
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'aiops.example.com/v2',
        kind: 'AITask',
        metadata: { name: 'web-load', namespace: ns },
        spec,
      }),
    );
    const stranger = await run(['simulate', '-f', file, '--since', '1h', ...viaProxy, '--as', 'stranger']);
    assert.equal(stranger.code, 1, stranger.stderr);
    assert.match(
      stranger.stderr,
      new RegExp(
        `^error: forbidden to read Prometheus through the service proxy of service ${ns}/prom:9090: .*\\(it needs get on services/proxy in namespace ${ns}, or use --prometheus-url\\)\\n$`,
      ),
    );

    // No flag: the Service the installed operator's Deployment names, as the Helm chart sets
    // it (AIOPS_PROMETHEUS_URL, a NAME.NAMESPACE host), read with the user's credentials.
    await installedOperator(`http://prom.${ns}:9090`, (fn) => t.after(fn));
    const found = await run([...args, '--replicas', '2', '-o', 'json']);
    assert.equal(found.code, 0, found.stderr);
    const byDefault = JSON.parse(found.stdout) as SimulationView;
    assert.equal(byDefault.prometheus, view.prometheus, "the operator's Prometheus, through the proxy");
    assert.deepEqual(byDefault.summary.actions, { ScaleUp: 5 });
    // AIOPS_PROMETHEUS_URL in the user's environment comes before the operator's Deployment.
    const byEnv = await run([...args, '--replicas', '2', '-o', 'json'], direct);
    assert.equal(byEnv.code, 0, byEnv.stderr);
    const fromEnv = JSON.parse(byEnv.stdout) as SimulationView;
    assert.equal(fromEnv.prometheus, prometheus.url.replace(/\/+$/, ''), 'the environment, reached directly');
    assert.deepEqual(fromEnv.summary.actions, { ScaleUp: 5 });
    const unknown = await run([
      'simulate',
      '-f',
      file,
      '--since',
      '1h',
      '--replicas',
      '2',
      '--as',
      'stranger',
    ]);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(
      unknown.stderr,
      new RegExp(
        `^error: the operator's Prometheus is not known \\(Deployment ${DEFAULT_INSTALL.namespace}/${DEFAULT_INSTALL.deployment}: .*forbidden.*\\): pass --prometheus-service NAMESPACE/NAME:PORT or --prometheus-url, or set AIOPS_PROMETHEUS_URL\\n$`,
      ),
    );
  });

  test('bad input: one line and the exit codes of the other commands', async (t) => {
    const ns = await freshNamespace('plugin-simulate-bad', (fn) => t.after(fn));
    await createTask(ns, 'elsewhere', {
      ...spec,
      trigger: { ...spec.trigger, query: 'max(demo_load{namespace="other"})' },
    });
    await createTask(ns, 'web-load', spec);
    const url = ['--prometheus-url', prometheus.url, '--replicas', '2'];

    const words = async (...args: string[]): Promise<string[]> =>
      (await kubectl(PATH, ['__complete', 'aiops', ...args], { KUBECONFIG: KC })).stdout
        .split('\n')
        .map((l) => l.split('\t')[0] ?? '');
    assert.ok((await words('sim')).includes('simulate'), 'completion knows the command');
    assert.ok((await words('-n', ns, 'simulate', 'web')).includes('web-load'), 'and the AITask names');
    assert.ok((await words('simulate', '--prom')).includes('--prometheus-service'), 'and its flags');

    const refused = await run(['simulate', 'elsewhere', '-n', ns, ...url]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /^error: the operator would not send the query \(QueryRefused\): .+\n$/);

    const unknown = await run(['simulate', 'nope', '-n', ns, ...url]);
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /^error: aitask "nope" not found in namespace /);

    const empty = await run(['simulate', 'web-load', '-n', ns, ...url, '--since', '1h']);
    assert.equal(empty.code, 1, empty.stderr);
    assert.match(
      empty.stderr,
      /^error: no samples of .* between .*: check the query and Prometheus' retention\n$/,
    );

    const backwards = await run([
      'simulate',
      'web-load',
      '-n',
      ns,
      ...url,
      '--from',
      iso(BASE_S + 60),
      '--to',
      iso(BASE_S),
    ]);
    assert.equal(backwards.code, 2, backwards.stderr);
    assert.match(backwards.stderr, /^error: --from .* is not before --to /);

    // kubectl's connection flags reach simulate's session: --server overrides the kubeconfig's.
    const elsewhere = await run([
      'simulate',
      'web-load',
      '-n',
      ns,
      ...url,
      '--server',
      'https://127.0.0.1:1',
    ]);
    assert.equal(elsewhere.code, 1, elsewhere.stderr);
    assert.match(elsewhere.stderr, /^error: cannot reach the apiserver at https:\/\/127\.0\.0\.1:1: /);
  });
});
