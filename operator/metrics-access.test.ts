// Who reads /metrics, decided on the real apiserver: runtime/metrics-auth.ts against tokens of
// real ServiceAccounts and the shipped aiops-metrics-reader ClusterRole (api/rbac.ts), with a
// clock of the test's own to step through the review caches' TTLs.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { METRICS_READER_ROLE, metricsReaderClusterRole } from '../api/rbac.ts';
import { freshNamespace, testTransport } from '../test/support/cluster.ts';
import { METRICS_AUTH_LIMITS, MetricsAuthorizer } from './runtime/metrics-auth.ts';

const RBAC = 'rbac.authorization.k8s.io';

/** A ServiceAccount `name` in `ns` and a token of it. */
async function serviceAccountToken(ns: string, name: string): Promise<string> {
  const admin = await testTransport();
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts`,
    body: { metadata: { name } },
  });
  const review = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return review.status.token;
}

/** Ensures the shipped metrics reader ClusterRole exists on the shared cluster. */
async function readerRole(): Promise<void> {
  const admin = await testTransport();
  await admin
    .request({ method: 'POST', path: `/apis/${RBAC}/v1/clusterroles`, body: metricsReaderClusterRole() })
    .catch((err: unknown) => {
      if (!/already exists/.test((err as Error).message)) throw err;
    });
}

test('TokenReview then SubjectAccessReview: 401 without a valid token, 403 without the role, 200 with it; an allow is kept 5 min, then asked again', async (t) => {
  const ns = await freshNamespace('metrics-auth', (fn) => t.after(fn));
  await readerRole();
  const admin = await testTransport();
  const token = await serviceAccountToken(ns, 'scraper');
  let now = 1_000_000;
  const authz = new MetricsAuthorizer(admin, () => now);

  assert.deepEqual(await authz.check(undefined, 'GET', '/metrics'), {
    allowed: false,
    code: 401,
    message: 'Unauthorized: no bearer token',
  });
  assert.equal((await authz.check('Basic dTpw', 'GET', '/metrics')).allowed, false);
  const forged = await authz.check('Bearer forged', 'GET', '/metrics');
  assert.equal(!forged.allowed && forged.code, 401);

  const denied = await authz.check(`Bearer ${token}`, 'GET', '/metrics');
  assert.equal(!denied.allowed && denied.code, 403);
  assert.match(!denied.allowed ? denied.message : '', new RegExp(`system:serviceaccount:${ns}:scraper`));

  const binding = `metrics-auth-${ns}`;
  await admin.request({
    method: 'POST',
    path: `/apis/${RBAC}/v1/clusterrolebindings`,
    body: {
      metadata: { name: binding },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: METRICS_READER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
    },
  });
  t.after(() =>
    admin
      .request({ method: 'DELETE', path: `/apis/${RBAC}/v1/clusterrolebindings/${binding}` })
      .catch(() => undefined),
  );
  assert.equal(
    (await authz.check(`Bearer ${token}`, 'GET', '/metrics')).allowed,
    false,
    'a denial is kept 30 s',
  );
  now += METRICS_AUTH_LIMITS.denyTtlMs + 1;
  // The RBAC authorizer sees a new binding a moment after the create returns.
  let allowed = false;
  for (let i = 0; i < 600 && !allowed; i++) {
    now += METRICS_AUTH_LIMITS.denyTtlMs + 1;
    allowed = (await authz.check(`Bearer ${token}`, 'GET', '/metrics')).allowed;
    if (!allowed) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(allowed, 'bound to aiops-metrics-reader: allowed');
  const other = await authz.check(`Bearer ${token}`, 'GET', '/debug');
  assert.equal(!other.allowed && other.code, 403, 'the role grants /metrics only');

  await admin.request({ method: 'DELETE', path: `/apis/${RBAC}/v1/clusterrolebindings/${binding}` });
  await new Promise((r) => setTimeout(r, 500));
  now += METRICS_AUTH_LIMITS.allowTtlMs - 1000;
  assert.equal(
    (await authz.check(`Bearer ${token}`, 'GET', '/metrics')).allowed,
    true,
    'within 5 min: cached',
  );
  now += METRICS_AUTH_LIMITS.allowTtlMs;
  let revoked = false;
  for (let i = 0; i < 600 && !revoked; i++) {
    now += METRICS_AUTH_LIMITS.allowTtlMs + METRICS_AUTH_LIMITS.authenticatedTtlMs;
    revoked = !(await authz.check(`Bearer ${token}`, 'GET', '/metrics')).allowed;
    if (!revoked) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(revoked, 'after the TTL the revoked binding is seen');
});

test('bounds: at most 8 reviews in flight (the rest 429 at once), caches hold at most 1,024 entries, long headers get no review', async () => {
  const authz = new MetricsAuthorizer(await testTransport());
  const burst = await Promise.all(
    Array.from({ length: 50 }, (_, i) => authz.check(`Bearer burst-${i}`, 'GET', '/metrics')),
  );
  const codes = burst.map((r) => (r.allowed ? 200 : r.code));
  assert.equal(codes.filter((c) => c === 401).length, METRICS_AUTH_LIMITS.maxReviewsInFlight);
  assert.equal(codes.filter((c) => c === 429).length, 50 - METRICS_AUTH_LIMITS.maxReviewsInFlight);

  for (let start = 0; start < 1100; start += METRICS_AUTH_LIMITS.maxReviewsInFlight)
    await Promise.all(
      Array.from({ length: METRICS_AUTH_LIMITS.maxReviewsInFlight }, (_, i) =>
        authz.check(`Bearer fill-${start + i}`, 'GET', '/metrics'),
      ),
    );
  assert.equal(authz.cached.users, METRICS_AUTH_LIMITS.cacheEntries);

  const fresh = new MetricsAuthorizer(await testTransport());
  const long = await fresh.check(
    `Bearer ${'x'.repeat(METRICS_AUTH_LIMITS.maxHeaderBytes)}`,
    'GET',
    '/metrics',
  );
  assert.equal(!long.allowed && long.code, 401);
  assert.equal(fresh.cached.users, 0, 'no review, nothing cached');
});
