// The deployed operator process (cmd/operator.ts) hosts the conversion webhook next to the
// controller: it answers ConversionReviews on --webhook-port with the certificate from
// --webhook-cert-dir, runs the opt-in storage migration before reconciling, and stops
// cleanly on SIGTERM: the controller at once, the webhook only after --webhook-shutdown-delay
// (it keeps answering while the pod leaves the Service's endpoints), or at a second signal;
// a bad flag exits 2.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../../scripts/lib/ports.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freshNamespace } from '../support/cluster.ts';
import { operatorKubeconfig, refusals } from '../support/operator-identity.ts';
import { waitFor } from '../harness/wait.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function convert(port: number, ca: string): Promise<{ status: number; body: string }> {
  const review = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: {
      uid: 'm-1',
      desiredAPIVersion: 'aiops.example.com/v1',
      objects: [
        {
          apiVersion: 'aiops.example.com/v2',
          kind: 'AITask',
          metadata: { name: 'x' },
          spec: {
            target: { kind: 'Deployment', name: 'web' },
            trigger: { threshold: 0.5 },
            remediation: { action: 'RestartPod' },
          },
        },
      ],
    },
  });
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/convert',
        ca,
        servername: 'localhost',
        agent: false,
        headers: { 'Content-Type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(review);
  });
}

/** The HTTP status of /healthz on `port`, 0 when nothing answers. */
const healthStatus = (port: number): Promise<number> =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => r.status,
    () => 0,
  );

test('a bad flag is a usage error (exit 2)', () => {
  const r = spawnSync(process.execPath, ['cmd/operator.ts', '--webhook-port', 'nine'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--webhook-port.*invalid.*expected a port/);
});

test('--webhook-max-concurrent-reviews: the webhook default (8), from the flag or its variable; below 1 is a usage error', () => {
  const help = spawnSync(process.execPath, ['cmd/operator.ts', '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.match(
    help.stdout,
    /--webhook-max-concurrent-reviews <n>\s+most ConversionReviews[^\n]*\(default: 8, env: AIOPS_WEBHOOK_MAX_CONCURRENT_REVIEWS\)/,
  );
  for (const [args, env] of [
    [['--webhook-max-concurrent-reviews=0'], {}],
    [[], { AIOPS_WEBHOOK_MAX_CONCURRENT_REVIEWS: 'many' }],
  ] as const) {
    const r = spawnSync(process.execPath, ['cmd/operator.ts', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--webhook-max-concurrent-reviews.*invalid.*expected a whole number ≥ 1/);
  }
});

test('the operator process serves the conversion webhook and stops on SIGTERM, the webhook last', async (t) => {
  const ns = await freshNamespace('manager', t.after.bind(t));
  const dir = mkdtempSync(join(tmpdir(), 'aiops-manager-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = createServingCert(dir);
  const [webhookPort = 0, metricsPort = 0, healthPort = 0] = await freePorts(3);
  const kubeconfig = await operatorKubeconfig();
  const child = spawn(
    process.execPath,
    [
      'cmd/operator.ts',
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${ns}`,
      '--prometheus-url=http://127.0.0.1:1',
      `--metrics-port=${metricsPort}`,
      `--health-port=${healthPort}`,
      '--bind-address=127.0.0.1',
      `--webhook-port=${webhookPort}`,
      `--webhook-cert-dir=${dir}`,
      '--migrate-storage-on-start',
      '--webhook-shutdown-delay=300',
      '--webhook-max-concurrent-reviews=2',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  // Until the first SIGTERM, a wait ends at once when the process exits.
  const died = new AbortController();
  const onExit = (code: number | null): void =>
    died.abort(new Error(`the operator exited (${code}) while the test waited`));
  child.once('exit', onExit);
  /**
   * Polls `check` every 100 ms for up to 60 s (a start from the TypeScript sources on a loaded
   * machine), `signal` ending it early; a failed wait carries the process's output.
   */
  const until = <T>(
    what: string,
    check: () => T | undefined | Promise<T | undefined>,
    signal?: AbortSignal,
  ) =>
    waitFor(what, check, { deadline: Date.now() + 60_000, watch: [], intervalMs: 100, signal }).catch(
      (err: unknown) => assert.fail(`${(err as Error).message}; output:\n${out}`),
    );

  const answer = await until(
    'the hosted webhook to answer a conversion',
    () => convert(webhookPort, cert.caPem),
    died.signal,
  );
  assert.equal(answer.status, 200);
  assert.match(answer.body, /"action":"restart_pod"/);
  await until(
    'the operator half to be up too (/healthz 200)',
    async () => ((await healthStatus(healthPort)) === 200 ? true : undefined),
    died.signal,
  );

  const migrated = /"msg":"storage migration done".*"storedVersions":\["v2"\]/;
  await until(
    'the opt-in startup migration to finish once the operator is up',
    () => (migrated.test(out) ? true : undefined),
    died.signal,
  );
  child.off('exit', onExit);
  child.kill('SIGTERM');
  await until('the controller half to stop at SIGTERM (/healthz refused)', async () =>
    (await healthStatus(healthPort)) === 0 ? true : undefined,
  );
  const during = await convert(webhookPort, cert.caPem);
  assert.equal(during.status, 200, 'conversions are still answered during the shutdown delay');
  assert.equal(child.exitCode, null, 'the process waits out the delay');
  child.kill('SIGTERM');
  assert.equal(await exited, 0, `a second signal ends it, gracefully; output:\n${out}`);
  assert.deepEqual(refusals(out), [], 'the shipped RBAC allowed every request');
});
