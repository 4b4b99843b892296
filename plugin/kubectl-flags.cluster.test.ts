// Integration tests of kubectl's output and connection flags in `kubectl aiops`, through the
// real kubectl binary against the shared harness cluster: `-o name` and `-o jsonpath=` (the
// JSONPath dialect checked against kubectl's own output on the same objects), and `--as`,
// `--as-group`, `--server`, `--token`, `--certificate-authority`,
// `--insecure-skip-tls-verify`, `--user`, `--cluster` taking effect on the apiserver: a
// ServiceAccount without rights is Forbidden, one with a Role reads.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubeTransport } from '../lib/kube/transport.ts';
import type * as v2 from '../api/schema/v2.ts';
import { fromYaml, toYaml } from '../lib/yaml.ts';
import { freshNamespace, testAITasks, testKubeconfig, testTransport } from '../test/support/cluster.ts';
import { executeJsonPath, parseJsonPath } from './jsonpath.ts';
import { buildAndInstall, kubectl, type KubectlResult } from '../test/support/kubectl-run.ts';
import { bindAITaskReader } from '../test/support/aitask-reader.ts';

let PATH = '';
let KC = '';
const dir = mkdtempSync(join(tmpdir(), 'aiops-plugin-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const run = (args: readonly string[], env: Record<string, string> = {}): Promise<KubectlResult> =>
  kubectl(PATH, ['aiops', ...args], { KUBECONFIG: KC, ...env });

function task(name: string, ns: string): v2.AITask {
  return {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name, namespace: ns, labels: { team: 'web', 'app.kubernetes.io/name': name } },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8, forSeconds: 60 },
      remediation: { action: 'ScaleUp', cooldownSeconds: 600 },
    },
  };
}

async function create(name: string, ns: string): Promise<void> {
  const c = await testAITasks('v2');
  await c.create(ns, task(name, ns));
  await c.patchStatus(ns, name, {
    phase: 'Monitoring',
    observedGeneration: 1,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Healthy',
        message: 'ok',
        lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    ],
  });
}

before(() => {
  PATH = buildAndInstall();
  KC = testKubeconfig();
});

void describe('kubectl aiops -o name', () => {
  void test('prints resource.group/name per AITask, as kubectl get -o name does', async (t) => {
    const ns = await freshNamespace('plugin-oname', (fn) => t.after(fn));
    await create('alpha', ns);
    await create('beta', ns);
    const one = await run(['describe', 'alpha', '-n', ns, '-o', 'name']);
    assert.equal(one.code, 0, one.stderr);
    const real = await kubectl(PATH, ['get', 'aitasks', 'alpha', '-n', ns, '-o', 'name'], { KUBECONFIG: KC });
    assert.equal(real.stdout, 'aitask.aiops.example.com/alpha\n');
    assert.equal(one.stdout, real.stdout);
    const all = await run(['describe', '-n', ns, '-o', 'name']);
    assert.equal(
      all.stdout,
      (await kubectl(PATH, ['get', 'aitasks', '-n', ns, '-o', 'name'], { KUBECONFIG: KC })).stdout,
    );
    assert.equal(
      (await run(['explain-phase', 'beta', '-n', ns, '-o', 'name'])).stdout,
      'aitask.aiops.example.com/beta\n',
    );
    assert.equal(
      (await run(['explain-phase', '-n', ns, '-o', 'name'])).stdout,
      'aitask.aiops.example.com/alpha\naitask.aiops.example.com/beta\n',
    );
    for (const args of [
      ['version', '-o', 'name'],
      ['generation-diff', 'alpha', '-n', ns, '-o', 'name'],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /^error: unsupported output format "name" for /);
    }
  });
});

void describe('kubectl aiops -o jsonpath', () => {
  void test('applies to the document -o json prints, in every command', async (t) => {
    const ns = await freshNamespace('plugin-jp', (fn) => t.after(fn));
    await create('alpha', ns);
    await create('beta', ns);
    const phase = await run(['describe', 'alpha', '-n', ns, '-o', 'jsonpath={.phase}']);
    assert.equal(phase.code, 0, phase.stderr);
    const doc = JSON.parse((await run(['describe', 'alpha', '-n', ns, '-o', 'json'])).stdout) as {
      phase: string;
    };
    assert.equal(phase.stdout, doc.phase);
    assert.equal(phase.stdout, 'Monitoring');
    const names = await run(['describe', '-n', ns, '-o', 'jsonpath={range .items[*]}{.name}{"\\n"}{end}']);
    assert.equal(names.stdout, 'alpha\nbeta\n');
    const ready = await run(['explain-phase', '-n', ns, '-o', 'jsonpath={.items[*].phase}']);
    assert.equal(ready.stdout, 'Monitoring Monitoring');
    const cond = await run([
      'describe',
      'beta',
      '-n',
      ns,
      '-o',
      'jsonpath={.conditions[?(@.type=="Ready")].status}',
    ]);
    assert.equal(cond.stdout, 'True');
    const version = await run(['version', '--client', '-o', 'jsonpath={.pluginVersion}']);
    assert.match(version.stdout, /^v\d+\.\d+\.\d+$/);
    const asJson = await run(['generation-diff', 'alpha', '-n', ns, '-o', 'jsonpath-as-json={.inSync}']);
    assert.equal(asJson.code, 0, asJson.stderr);
    assert.equal(asJson.stdout, '[\n    true\n]\n');
  });

  void test('an invalid template is a usage error before any request; a failing one exits 1', async () => {
    for (const template of ['{.phase', '{.items[}', '{range .items[*]}{.name}', '{nosuch}']) {
      const r = await run(['describe', 'x', '-o', `jsonpath=${template}`], { KUBECONFIG: '/nonexistent' });
      assert.equal(r.code, 2, `${template}: ${r.stderr}`);
      assert.match(r.stderr, /^error: error parsing jsonpath /, template);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    }
    const empty = await run(['version', '--client', '-o', 'jsonpath']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /template format specified but no template given/);
    const failing = await run(['version', '--client', '-o', 'jsonpath={.pluginVersion[0]}']);
    assert.equal(failing.code, 1);
    assert.match(
      failing.stderr,
      /^error: error executing jsonpath "\{\.pluginVersion\[0\]\}": string is not array or slice/,
    );
  });

  void test("the evaluator prints what kubectl's own jsonpath prints on the same objects", async (t) => {
    const ns = await freshNamespace('plugin-jpk', (fn) => t.after(fn));
    await create('alpha', ns);
    await create('beta', ns);
    const templates = [
      '{.metadata.name}',
      '{.items[*].metadata.name}',
      '{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}',
      '{.items[0].spec.trigger}',
      '{.items[-1].spec.trigger.threshold}',
      '{.items[*].status.conditions[?(@.type=="Ready")].status}',
      '{.items[?(@.metadata.name=="beta")].metadata.labels.app\\.kubernetes\\.io/name}',
      "{.items[*]['metadata.name', 'spec.remediation.action']}",
      '{.items[1:].metadata.name}',
      '{.items[?(@.spec.trigger.threshold>0.5)].metadata.name}',
      '{.items[?(@.metadata.labels.team)].metadata.name}',
      '{.kind} {.nosuch} text',
      '{range .items[*]}[{.metadata.name}, {.spec.target}] {end}',
    ];
    const list = await kubectl(PATH, ['get', 'aitasks', '-n', ns, '-o', 'json'], { KUBECONFIG: KC });
    const data: unknown = JSON.parse(list.stdout);
    for (const template of templates) {
      const real = await kubectl(PATH, ['get', 'aitasks', '-n', ns, '-o', `jsonpath=${template}`], {
        KUBECONFIG: KC,
      });
      assert.equal(real.code, 0, `${template}: ${real.stderr}`);
      assert.equal(executeJsonPath(parseJsonPath(template), data), real.stdout, template);
    }
    const asJson = await kubectl(
      PATH,
      ['get', 'aitasks', '-n', ns, '-o', 'jsonpath-as-json={.items[*].metadata.name}'],
      {
        KUBECONFIG: KC,
      },
    );
    assert.equal(executeJsonPath(parseJsonPath('{.items[*].metadata.name}'), data, true), asJson.stdout);
  });
});

interface KubeconfigDoc {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
}

/** Creates ServiceAccounts `reader` (may get and list AITasks, as may group `aiops-readers`) and `nobody`. */
async function identities(admin: KubeTransport, ns: string): Promise<void> {
  for (const name of ['reader', 'nobody'])
    await admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/serviceaccounts`,
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    });
  await bindAITaskReader(admin, ns, [
    { kind: 'ServiceAccount', name: 'reader', namespace: ns },
    { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'aiops-readers' },
  ]);
}

async function token(admin: KubeTransport, ns: string, sa: string): Promise<string> {
  const r = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  });
  return r.status.token;
}

/** Runs until `ok` holds (RBAC takes a moment to reach the authorizer's cache), at most 20 s. */
async function eventually(
  args: readonly string[],
  env: Record<string, string>,
  ok: (r: KubectlResult) => boolean,
): Promise<KubectlResult> {
  const end = Date.now() + 60_000;
  for (;;) {
    const r = await run(args, env);
    if (ok(r) || Date.now() > end) return r;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

void describe('kubectl aiops connection and impersonation flags', () => {
  void test('--as and --as-group impersonate on every request: Forbidden without rights, read with them', async (t) => {
    const ns = await freshNamespace('plugin-as', (fn) => t.after(fn));
    await create('alpha', ns);
    await identities(await testTransport(), ns);
    const reader = `system:serviceaccount:${ns}:reader`;
    const ok = await eventually(['describe', 'alpha', '-n', ns, `--as=${reader}`], {}, (r) => r.code === 0);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Name:\s+alpha/);
    const list = await run(['explain-phase', '-n', ns, '--as', reader, '-o', 'name']);
    assert.equal(list.stdout, 'aitask.aiops.example.com/alpha\n', list.stderr);
    const nobody = `system:serviceaccount:${ns}:nobody`;
    for (const args of [
      ['describe', 'alpha', '-n', ns, `--as=${nobody}`],
      ['explain-phase', '-n', ns, '--as', nobody],
      ['describe', 'alpha', '-n', ns, '--as=jane'],
    ]) {
      const r = await run(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, /^error: forbidden: .*cannot (get|list) resource "aitasks"/, args.join(' '));
      assert.match(r.stderr, new RegExp(`User "${(args.at(-1) ?? '').replace(/^--as=/, '')}"`));
    }
    const grouped = await run([
      'describe',
      'alpha',
      '-n',
      ns,
      '--as=jane',
      '--as-group=aiops-readers',
      '--as-group=devs',
    ]);
    assert.equal(grouped.code, 0, grouped.stderr);
    const noUser = await run(['describe', 'alpha', '-n', ns, '--as-group=aiops-readers']);
    assert.equal(noUser.code, 1);
    assert.match(noUser.stderr, /^error: --as-group and --as-uid need --as/);
  });

  void test('--server, --token, --certificate-authority and --insecure-skip-tls-verify without any kubeconfig', async (t) => {
    const ns = await freshNamespace('plugin-srv', (fn) => t.after(fn));
    await create('alpha', ns);
    const admin = await testTransport();
    await identities(admin, ns);
    const kc = fromYaml(readFileSync(KC, 'utf8')) as KubeconfigDoc;
    const cluster = kc.clusters[0]?.cluster;
    assert.ok(cluster);
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, Buffer.from(cluster['certificate-authority-data'], 'base64'));
    const home = mkdtempSync(join(dir, 'home-'));
    const bare = { KUBECONFIG: '', HOME: home };
    const readerToken = await token(admin, ns, 'reader');
    const conn = ['--server', cluster.server, '--token', readerToken];
    const ok = await eventually(
      ['describe', 'alpha', '-n', ns, ...conn, '--certificate-authority', ca, '-o', 'jsonpath={.name}'],
      bare,
      (r) => r.code === 0,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'alpha');
    const insecure = await run(
      ['describe', 'alpha', '-n', ns, ...conn, '--insecure-skip-tls-verify', '-o', 'name'],
      bare,
    );
    assert.equal(insecure.stdout, 'aitask.aiops.example.com/alpha\n', insecure.stderr);
    const unverified = await run(['describe', 'alpha', '-n', ns, ...conn, '--request-timeout', '5s'], bare);
    assert.equal(unverified.code, 1);
    assert.match(unverified.stderr, /cannot reach the apiserver.*(certificate|self.signed)/i);
    const nobody = await run(
      [
        'describe',
        'alpha',
        '-n',
        ns,
        '--server',
        cluster.server,
        '--token',
        await token(admin, ns, 'nobody'),
        '--insecure-skip-tls-verify',
      ],
      bare,
    );
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /forbidden: .*system:serviceaccount:.*:nobody/);
    const bogus = await run(
      [
        'describe',
        'alpha',
        '-n',
        ns,
        '--server',
        cluster.server,
        '--token',
        'bogus',
        '--insecure-skip-tls-verify',
      ],
      bare,
    );
    assert.equal(bogus.code, 1);
    assert.match(bogus.stderr, /401 Unauthorized/);
    const both = await run(
      ['describe', 'alpha', ...conn, '--insecure-skip-tls-verify', '--certificate-authority', ca],
      bare,
    );
    assert.equal(both.code, 2);
  });

  void test('--cluster and --user pick kubeconfig entries over the context, --token overrides the user', async (t) => {
    const ns = await freshNamespace('plugin-usr', (fn) => t.after(fn));
    await create('alpha', ns);
    const admin = await testTransport();
    await identities(admin, ns);
    const kc = fromYaml(readFileSync(KC, 'utf8')) as KubeconfigDoc;
    const cluster = kc.clusters[0]?.cluster;
    assert.ok(cluster);
    const [readerToken, nobodyToken] = [await token(admin, ns, 'reader'), await token(admin, ns, 'nobody')];
    const path = join(dir, 'multi.kubeconfig');
    writeFileSync(
      path,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'dead', cluster: { server: 'https://127.0.0.1:1' } },
          { name: 'live', cluster },
        ],
        users: [
          { name: 'nobody', user: { token: nobodyToken } },
          { name: 'reader', user: { token: readerToken } },
        ],
        contexts: [{ name: 'main', context: { cluster: 'dead', user: 'nobody', namespace: ns } }],
        'current-context': 'main',
      }),
      { mode: 0o600 },
    );
    const env = { KUBECONFIG: path };
    const dead = await run(['describe', 'alpha', '--request-timeout', '5s'], env);
    assert.match(dead.stderr, /cannot reach the apiserver at https:\/\/127\.0\.0\.1:1/);
    const forbidden = await run(['describe', 'alpha', '--cluster', 'live'], env);
    assert.equal(forbidden.code, 1);
    assert.match(forbidden.stderr, /forbidden: .*:nobody"/);
    const ok = await eventually(
      ['describe', 'alpha', '--cluster', 'live', '--user', 'reader', '-o', 'name'],
      env,
      (r) => r.code === 0,
    );
    assert.equal(ok.stdout, 'aitask.aiops.example.com/alpha\n', ok.stderr);
    const tokenWins = await run(
      ['describe', 'alpha', '--cluster', 'live', '--token', readerToken, '-o', 'name'],
      env,
    );
    assert.equal(tokenWins.stdout, 'aitask.aiops.example.com/alpha\n', tokenWins.stderr);
    const serverWins = await run(
      [
        'describe',
        'alpha',
        '--server',
        cluster.server,
        '--user',
        'reader',
        '--insecure-skip-tls-verify',
        '-o',
        'name',
      ],
      env,
    );
    assert.equal(serverWins.stdout, 'aitask.aiops.example.com/alpha\n', serverWins.stderr);
    for (const [flag, message] of [
      ['--cluster=nosuch', /^error: cluster "nosuch" does not exist in the kubeconfig\n$/],
      ['--user=nosuch', /^error: user "nosuch" does not exist in the kubeconfig\n$/],
    ] as const) {
      const r = await run(['describe', 'alpha', flag], env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, message);
    }
  });
});
