// Who reads /metrics, decided on the real apiserver: runtime/metrics-auth.ts against tokens of
// real ServiceAccounts and the shipped aiops-metrics-reader ClusterRole (api/rbac.ts), with a
// clock of the test's own to step through the review caches' TTLs and the per-address pace of
// reviews, and a granted token renewed while a flood holds the lane of unknown tokens.

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

/** A ServiceAccount `name` in `ns` bound to the shipped reader role, and a token of it; the binding goes at `after`. */
async function readerToken(
  ns: string,
  name: string,
  after: (fn: () => Promise<unknown>) => void,
): Promise<string> {
  await readerRole();
  const admin = await testTransport();
  const token = await serviceAccountToken(ns, name);
  const binding = `metrics-reader-${ns}-${name}`;
  await admin.request({
    method: 'POST',
    path: `/apis/${RBAC}/v1/clusterrolebindings`,
    body: {
      metadata: { name: binding },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: METRICS_READER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
  });
  after(() =>
    admin
      .request({ method: 'DELETE', path: `/apis/${RBAC}/v1/clusterrolebindings/${binding}` })
      .catch(() => undefined),
  );
  return token;
}

test('bounds: at most 8 reviews in flight (the rest 429 at once), failure caches hold at most 1,024 entries, long headers get no review', async () => {
  const authz = new MetricsAuthorizer(await testTransport());
  const burst = await Promise.all(
    Array.from({ length: 50 }, (_, i) => authz.check(`Bearer burst-${i}`, 'GET', '/metrics', '10.0.0.1')),
  );
  const codes = burst.map((r) => (r.allowed ? 200 : r.code));
  assert.equal(codes.filter((c) => c === 401).length, METRICS_AUTH_LIMITS.maxReviewsInFlight);
  assert.equal(codes.filter((c) => c === 429).length, 50 - METRICS_AUTH_LIMITS.maxReviewsInFlight);

  for (let start = 0; start < 1100; start += METRICS_AUTH_LIMITS.maxReviewsInFlight)
    await Promise.all(
      Array.from({ length: METRICS_AUTH_LIMITS.maxReviewsInFlight }, (_, i) => {
        const n = start + i;
        return authz.check(`Bearer fill-${n}`, 'GET', '/metrics', `10.1.${n >> 8}.${n & 255}`);
      }),
    );
  assert.equal(authz.cached.unauthenticated, METRICS_AUTH_LIMITS.cacheEntries);

  const fresh = new MetricsAuthorizer(await testTransport());
  const long = await fresh.check(
    `Bearer ${'x'.repeat(METRICS_AUTH_LIMITS.maxHeaderBytes)}`,
    'GET',
    '/metrics',
  );
  assert.equal(!long.allowed && long.code, 401);
  assert.equal(fresh.cached.unauthenticated, 0, 'no review, nothing cached');
});

test('reviews of unknown tokens are paced per address: the burst, then the rate; another address keeps its own pace', async () => {
  let now = 5_000_000;
  const authz = new MetricsAuthorizer(await testTransport(), () => now);
  const from = async (address: string, n: number, tag: string): Promise<number[]> => {
    const codes: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = await authz.check(`Bearer ${tag}-${i}`, 'GET', '/metrics', address);
      codes.push(r.allowed ? 200 : r.code);
    }
    return codes;
  };
  const count = (codes: number[], code: number): number => codes.filter((c) => c === code).length;
  const first = await from('10.2.0.1', 20, 'a');
  assert.equal(count(first, 401), METRICS_AUTH_LIMITS.reviewBurstPerAddress, 'the burst is reviewed');
  assert.equal(
    count(first, 429),
    20 - METRICS_AUTH_LIMITS.reviewBurstPerAddress,
    'the rest is refused unreviewed',
  );
  const other = await from('10.2.0.2', 3, 'b');
  assert.deepEqual(other, [401, 401, 401], "one address's flood leaves another's pace whole");
  assert.deepEqual(await from('10.2.0.1', 1, 'a'), [401], 'a cached failure costs no review and no pace');
  now += 1000;
  const later = await from('10.2.0.1', 10, 'c');
  assert.equal(
    count(later, 401),
    METRICS_AUTH_LIMITS.reviewsPerSecondPerAddress,
    'one second later: the rate',
  );
});

test('a flood of failures never evicts a granted token, and its renewal after the TTL gets through a full stranger lane and a paced-out address', async (t) => {
  const ns = await freshNamespace('metrics-renew', (fn) => t.after(fn));
  const token = await readerToken(ns, 'scraper', (fn) => t.after(fn));
  let now = 9_000_000;
  const authz = new MetricsAuthorizer(await testTransport(), () => now);
  const address = '10.3.0.1';
  let granted = false;
  for (let i = 0; i < 50 && !granted; i++) {
    now += METRICS_AUTH_LIMITS.denyTtlMs + 1;
    granted = (await authz.check(`Bearer ${token}`, 'GET', '/metrics', address)).allowed;
    if (!granted) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(granted, 'bound to aiops-metrics-reader: allowed');

  for (let start = 0; start < 1100; start += METRICS_AUTH_LIMITS.maxReviewsInFlight)
    await Promise.all(
      Array.from({ length: METRICS_AUTH_LIMITS.maxReviewsInFlight }, (_, i) => {
        const n = start + i;
        return authz.check(`Bearer flood-${n}`, 'GET', '/metrics', `10.4.${n >> 8}.${n & 255}`);
      }),
    );
  assert.equal(authz.cached.granted, 1, 'the grant is kept apart from 1,100 failures');
  for (let i = 0; i < 20; i++) await authz.check(`Bearer paced-${i}`, 'GET', '/metrics', address);
  const paced = await authz.check('Bearer paced-last', 'GET', '/metrics', address);
  assert.equal(!paced.allowed && paced.code, 429, "the scraper's address is paced out for strangers");

  now += METRICS_AUTH_LIMITS.allowTtlMs + 1;
  const holding = Array.from({ length: METRICS_AUTH_LIMITS.maxReviewsInFlight }, (_, i) =>
    authz.check(`Bearer hold-${i}`, 'GET', '/metrics', `10.5.0.${i}`),
  );
  const full = await authz.check('Bearer one-more', 'GET', '/metrics', '10.5.1.1');
  assert.equal(!full.allowed && full.code, 429, 'the stranger lane is full');
  const renewed = await authz.check(`Bearer ${token}`, 'GET', '/metrics', address);
  assert.ok(renewed.allowed, `renewed after the TTL: ${JSON.stringify(renewed)}`);
  await Promise.all(holding);
});
