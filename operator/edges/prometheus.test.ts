import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from 'node:http';
import { parseQueryResponse, PrometheusClient } from './prometheus.ts';

test('parseQueryResponse classifies every answer', () => {
  const ok = (result: unknown, resultType = 'vector') => ({
    status: 'success',
    data: { resultType, result },
  });
  assert.deepEqual(parseQueryResponse(200, ok([{ metric: {}, value: [1, '0.5'] }])), {
    ok: true,
    value: 0.5,
  });
  assert.deepEqual(parseQueryResponse(200, ok([1, '2'], 'scalar')), { ok: true, value: 2 });
  assert.deepEqual(
    parseQueryResponse(200, ok([{ metric: { pod: 'cache-0', namespace: 'ns' }, value: [1, '3'] }])),
    { ok: true, value: 3, pod: 'cache-0' },
    'a sample naming a pod names it',
  );
  for (const pod of ['Cache_0', '', 'a'.repeat(254), 7, '-x'])
    assert.deepEqual(
      parseQueryResponse(200, ok([{ metric: { pod }, value: [1, '3'] }])),
      { ok: true, value: 3 },
      `a pod label ${JSON.stringify(pod).slice(0, 20)} is no pod's name`,
    );
  assert.equal(parseQueryResponse(200, ok([])).ok, false);
  const cases: [number, unknown, string][] = [
    [200, ok([]), 'NoData'],
    [200, ok([{ value: [1, 'NaN'] }]), 'NoData'],
    [200, ok([{ value: [1, '1'] }, { value: [1, '2'] }]), 'QueryFailed'],
    [200, ok([], 'matrix'), 'QueryFailed'],
    [400, { status: 'error', errorType: 'bad_data', error: 'parse error' }, 'QueryFailed'],
    [503, { status: 'error', errorType: 'unavailable', error: 'x' }, 'MetricsUnavailable'],
    [502, undefined, 'MetricsUnavailable'],
  ];
  for (const [code, body, reason] of cases) {
    const got = parseQueryResponse(code, body);
    assert.equal(got.ok ? 'ok' : got.reason, reason, JSON.stringify(body));
  }
});

test('PrometheusClient: answers, refused connections and timeouts over real HTTP', async (t) => {
  const server = createServer((req, res) => {
    if (req.url?.includes('slow')) return; // never answers
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, '7'] } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  const client = new PrometheusClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 300 });
  for (let i = 0; i < 3; i++) assert.deepEqual(await client.query('vector(7)'), { ok: true, value: 7 });
  const slow = await client.query('slow');
  assert.equal(
    slow.ok ? 'ok' : `${slow.reason} ${slow.message}`,
    `MetricsUnavailable Prometheus unreachable at http://127.0.0.1:${port} (ETIMEDOUT)`,
  );
  const closed = new PrometheusClient({ url: 'http://127.0.0.1:1' });
  const refused = await closed.query('up');
  assert.equal(
    refused.ok ? 'ok' : refused.message,
    'Prometheus unreachable at http://127.0.0.1:1 (ECONNREFUSED)',
  );
  const secret = new PrometheusClient({ url: 'http://admin:s3cret@127.0.0.1:1/prom?token=t0ken' });
  const redacted = await secret.query('up');
  assert.equal(
    redacted.ok ? 'ok' : redacted.message,
    'Prometheus unreachable at http://***@127.0.0.1:1/prom?*** (ECONNREFUSED)',
    'credentials in --prometheus-url never reach a tenant-visible message',
  );
});

test('PrometheusClient: an answer over maxResponseBytes fails the query instead of being read whole', async (t) => {
  const big = JSON.stringify({
    status: 'success',
    data: { resultType: 'vector', result: [] },
    pad: 'x'.repeat(64 * 1024),
  });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(big);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  const client = new PrometheusClient({ url: `http://127.0.0.1:${port}`, maxResponseBytes: 16 * 1024 });
  const answer = await client.query('up');
  assert.equal(
    answer.ok ? 'ok' : `${answer.reason} ${answer.message}`,
    'QueryFailed Prometheus answered with more than 16384 bytes; the query must return one sample',
  );
  const roomy = new PrometheusClient({ url: `http://127.0.0.1:${port}` });
  const fits = await roomy.query('up');
  assert.equal(
    fits.ok ? 'ok' : fits.reason,
    'NoData',
    'under the default 1 MiB the answer is read and parsed',
  );
});

test("PrometheusClient: every query carries Prometheus' own timeout, the client's, and a timeout answer says so", async (t) => {
  const seen: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    seen.push(params);
    const answers: Record<string, [number, unknown]> = {
      slow: [
        503,
        { status: 'error', errorType: 'timeout', error: 'query timed out in expression evaluation' },
      ],
      deadline: [422, { status: 'error', errorType: 'execution', error: 'context deadline exceeded' }],
    };
    const [code, body] = answers[params.get('query') ?? ''] ?? [
      200,
      { status: 'success', data: { resultType: 'scalar', result: [1, '7'] } },
    ];
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  for (const [timeoutMs, sent] of [
    [undefined, '5'],
    [250, '0.25'],
    [90_000, '90'],
  ] as const) {
    const client = new PrometheusClient({
      url: `http://127.0.0.1:${port}`,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    assert.deepEqual(await client.query('vector(7)'), { ok: true, value: 7 });
    assert.equal(seen.at(-1)?.get('timeout'), sent, `timeoutMs ${timeoutMs ?? 'default'}`);
    assert.equal(seen.at(-1)?.get('query'), 'vector(7)');
  }
  const client = new PrometheusClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
  assert.deepEqual(await client.query('slow'), {
    ok: false,
    reason: 'MetricsUnavailable',
    message:
      "timeout: query timed out in expression evaluation (Prometheus stopped it at the operator's 2s query timeout)",
  });
  assert.deepEqual(await client.query('deadline'), {
    ok: false,
    reason: 'MetricsUnavailable',
    message:
      "execution: context deadline exceeded (Prometheus stopped it at the operator's 2s query timeout)",
  });
});

test('PrometheusClient: a URL with a path prefix and userinfo is queried under the prefix with basic auth, over IPv4 and IPv6 loopback', async (t) => {
  const seen: { url: string; auth: string }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization ?? '' });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, '3'] } }));
  });
  await new Promise<void>((r) => server.listen(0, '::', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  for (const host of ['127.0.0.1', '[::1]']) {
    const client = new PrometheusClient({
      url: `http://us%20er:p%40ss@${host}:${port}/prom/`,
      timeoutMs: 2000,
    });
    assert.deepEqual(await client.query('up{job="a b"}'), { ok: true, value: 3 });
  }
  const basic = `Basic ${Buffer.from('us er:p@ss').toString('base64')}`;
  const path = `/prom/api/v1/query?query=${encodeURIComponent('up{job="a b"}')}&timeout=2`;
  assert.deepEqual(seen, [
    { url: path, auth: basic },
    { url: path, auth: basic },
  ]);
});
