// Attacks on /metrics as shipped (`--metrics-secure`, HTTPS behind TokenReview and
// SubjectAccessReview): a tenant's own token, no token, a forged one, plain HTTP, the probe
// port and a flood of distinct tokens. Only a ServiceAccount bound to the aiops-metrics-reader
// ClusterRole reads the metrics; the operator, under the CSV's RBAC, keeps running and keeps
// serving the scraper. Played on a stage of the suite's own.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { httpsCall } from '../support/https-call.ts';
import { useStage } from './use-stage.ts';

const { stage } = useStage({ bystander: false });

/** GET /metrics over HTTPS trusting the stage's CA, with `token` as bearer token when given. */
const get = (token: string | undefined) =>
  httpsCall(stage.operator.metricsPort, '/metrics', {
    ca: stage.scraper.ca,
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
  });

/** The bearer token in a kubeconfig serviceAccountKubeconfig wrote. */
function tokenOf(kubeconfig: string): string {
  const config = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  return config.users[0]?.user.token ?? '';
}

test('the scraper bound to aiops-metrics-reader reads /metrics over HTTPS', async () => {
  const res = await get(stage.scraper.token);
  assert.equal(res.status, 200, res.text);
  assert.match(res.text, /^# TYPE controller_runtime_reconcile_total counter$/m);
});

test('no token, a forged token and an oversized header are 401; a tenant token is 403', async () => {
  const none = await get(undefined);
  assert.equal(none.status, 401);
  assert.doesNotMatch(none.text, /aiops_/);
  const forged = await get('eyJhbGciOiJSUzI1NiJ9.e30.forged');
  assert.equal(forged.status, 401);
  assert.match(forged.text, /not valid/);
  const huge = await get('x'.repeat(9000));
  assert.equal(huge.status, 401);
  assert.match(huge.text, /too long/);
  const mallory = await get(tokenOf(stage.mallory.kubeconfig));
  assert.equal(mallory.status, 403, mallory.text);
  assert.match(mallory.text, /system:serviceaccount:mallory:tenant.*aiops-metrics-reader/);
  assert.doesNotMatch(mallory.text, /controller_runtime_reconcile/);
});

test('plain HTTP gets nothing: not on the metrics port, and the probe port serves no /metrics', async () => {
  await assert.rejects(fetch(`http://127.0.0.1:${stage.operator.metricsPort}/metrics`));
  const ready = await fetch(`http://127.0.0.1:${healthPort()}/readyz`);
  assert.equal(ready.status, 200);
  const probe = await fetch(`http://127.0.0.1:${healthPort()}/metrics`);
  assert.equal(probe.status, 404);
  assert.doesNotMatch(await probe.text(), /aiops_/);
});

test('200 distinct forged tokens at once: none reads, the operator stays up and serves the scraper', async () => {
  // One address's connections beyond its share are closed on arrival: that is a refusal too.
  const closedOnArrival = { status: 0, text: 'connection closed' };
  const flood = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      get(`forged-${i}-${'y'.repeat(64)}`).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') return closedOnArrival;
        throw err;
      }),
    ),
  );
  for (const res of flood)
    assert.ok(res.status === 401 || res.status === 429 || res.status === 0, `${res.status} ${res.text}`);
  const child = stage.operator.child;
  assert.ok(child.exitCode === null && child.signalCode === null, 'the operator is still running');
  const res = await get(stage.scraper.token);
  assert.equal(res.status, 200, res.text);
});

/** The health port the operator logged at start. */
function healthPort(): number {
  const line = stage.operator.logs.find((l) => l['msg'] === 'serving endpoints');
  const port = line?.['healthPort'];
  assert.equal(typeof port, 'number', 'the operator logs its health port');
  return port as number;
}
