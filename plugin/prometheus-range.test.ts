import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { test } from 'node:test';
import {
  choosePrometheus,
  parsePrometheusService,
  parsePrometheusUrl,
  parseRangeAnswer,
  readRange,
  serviceOfUrl,
} from './prometheus-range.ts';
import { MAX_POINTS_PER_QUERY, STEP_MS } from './simulate-window.ts';

const matrix = (series: { values: [number, string][] }[]) => ({
  status: 'success',
  data: { resultType: 'matrix', result: series.map((s) => ({ metric: {}, ...s })) },
});

test('parseRangeAnswer: the samples of one series; none; refusals in one line', () => {
  assert.deepEqual(
    parseRangeAnswer(
      matrix([
        {
          values: [
            [1772323200, '0.5'],
            [1772323215.5, 'NaN'],
          ],
        },
      ]),
    ),
    [
      { at: 1772323200_000, value: 0.5 },
      { at: 1772323215_500, value: NaN },
    ],
  );
  assert.deepEqual(parseRangeAnswer(matrix([])), []);
  const table: [unknown, RegExp][] = [
    [matrix([{ values: [] }, { values: [] }]), /returned 2 series; it must return one/],
    [
      { status: 'error', errorType: 'bad_data', error: 'parse error' },
      /Prometheus answered bad_data: parse error/,
    ],
    [
      { status: 'success', data: { resultType: 'vector', result: [] } },
      /answered a vector; a range query gives a matrix/,
    ],
    ['<html>', /answered an error/],
  ];
  for (const [body, want] of table) assert.throws(() => parseRangeAnswer(body), want);
});

test('--prometheus-service and --prometheus-url: what they accept; the Service an operator URL names', () => {
  assert.deepEqual(parsePrometheusService('monitoring/prometheus-operated:9090'), {
    namespace: 'monitoring',
    name: 'prometheus-operated',
    port: '9090',
  });
  assert.equal(parsePrometheusService('monitoring/https:prom:web').name, 'https:prom');
  for (const bad of ['prometheus:9090', 'monitoring/prom', 'Mon/prom:9090', 'a/b:c:d'])
    assert.throws(() => parsePrometheusService(bad), /use NAMESPACE\/NAME:PORT/);
  assert.equal(parsePrometheusUrl('http://localhost:9090/'), 'http://localhost:9090');
  assert.throws(() => parsePrometheusUrl('ftp://x'), /invalid --prometheus-url/);
  assert.throws(() => parsePrometheusUrl('http://x/?a=1'), /invalid --prometheus-url/);
  assert.deepEqual(serviceOfUrl('http://prometheus-operated.monitoring.svc:9090'), {
    namespace: 'monitoring',
    name: 'prometheus-operated',
    port: '9090',
  });
  assert.deepEqual(serviceOfUrl('https://prom.mon.svc.cluster.local'), {
    namespace: 'mon',
    name: 'https:prom',
    port: '443',
  });
  assert.deepEqual(serviceOfUrl('http://prometheus-operated.monitoring:9090'), {
    namespace: 'monitoring',
    name: 'prometheus-operated',
    port: '9090',
  });
  assert.equal(serviceOfUrl('http://prometheus.example.com:9090'), undefined);
  assert.equal(serviceOfUrl('http://localhost:9090'), undefined);
  assert.equal(serviceOfUrl('http://10.0.0.1:9090'), undefined);
  assert.equal(serviceOfUrl('http://prom.mon.svc:9090/prefix'), undefined);
});

/** A Prometheus stand-in answering each range query with one sample per step; the queries it got. */
async function fakePrometheus(
  delayMs = 0,
): Promise<{ server: Server; url: string; asked: URLSearchParams[] }> {
  const asked: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    asked.push(q);
    const start = Number(q.get('start'));
    const end = Number(q.get('end'));
    const values: [number, string][] = [];
    for (let t = start; t <= end; t += STEP_MS / 1000) values.push([t, '1']);
    setTimeout(() => res.end(JSON.stringify(matrix([{ values }]))), delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}`, asked };
}

test('readRange: a long window in pieces of at most 11,000 points, each point once, in order', async (t) => {
  const p = await fakePrometheus();
  t.after(() => p.server.close());
  const from = Date.parse('2026-03-01T00:00:00Z');
  const to = from + 7 * 86_400_000;
  const pieces: number[] = [];
  const samples = await readRange({ kind: 'url', url: p.url }, 'up', { from, to }, 30_000, (done) =>
    pieces.push(done),
  );
  assert.equal(samples.length, (to - from) / STEP_MS + 1);
  assert.ok(samples.every((s, i) => s.at === from + i * STEP_MS));
  assert.deepEqual(pieces, [1, 2, 3, 4]);
  for (const q of p.asked) {
    assert.equal(q.get('query'), 'up');
    assert.equal(q.get('step'), '15s');
    assert.ok((Number(q.get('end')) - Number(q.get('start'))) / 15 + 1 <= MAX_POINTS_PER_QUERY);
  }
});

test('readRange: one deadline for all pieces; a Prometheus that drops the connection in one line', async (t) => {
  const slow = await fakePrometheus(2_000);
  t.after(() => {
    slow.server.closeAllConnections();
    slow.server.close();
  });
  const from = Date.parse('2026-03-01T00:00:00Z');
  await assert.rejects(
    readRange({ kind: 'url', url: slow.url }, 'up', { from, to: from + 3_600_000 }, 200),
    /did not answer the 1 range queries within --request-timeout 0.2s/,
  );
  const gone = createServer((req) => req.socket.destroy());
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  t.after(() => gone.close());
  const address = gone.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  await assert.rejects(
    readRange({ kind: 'url', url }, 'up', { from, to: from + 3_600_000 }, 5_000),
    /Prometheus at http:\/\/127\.0\.0\.1:\d+ is unreachable/,
  );
});

test('choosePrometheus: --prometheus-url, --prometheus-service, AIOPS_PROMETHEUS_URL, then the operator', () => {
  const url = 'http://prom.example:9090';
  const service = 'monitoring/prometheus-operated:9090';
  const env = { AIOPS_PROMETHEUS_URL: 'http://127.0.0.1:9091/' };
  const svc = { namespace: 'monitoring', name: 'prometheus-operated', port: '9090' };
  const table: [{ url?: string; service?: string }, Record<string, string | undefined>, unknown][] = [
    [{ url }, env, { kind: 'url', url }],
    [{ service }, env, { kind: 'service', service: svc }],
    [{}, env, { kind: 'url', url: 'http://127.0.0.1:9091' }],
    [{}, { AIOPS_PROMETHEUS_URL: '' }, { kind: 'operator' }],
    [{}, {}, { kind: 'operator' }],
    [{ url }, {}, { kind: 'url', url }],
    [{ service }, {}, { kind: 'service', service: svc }],
  ];
  for (const [flags, e, want] of table)
    assert.deepEqual(choosePrometheus(flags, e), want, JSON.stringify([flags, e]));
  assert.throws(() => choosePrometheus({ url, service }, env), /cannot be combined: give one/);
  assert.throws(
    () => choosePrometheus({}, { AIOPS_PROMETHEUS_URL: 'ftp://prom:9090' }),
    /invalid AIOPS_PROMETHEUS_URL "ftp:\/\/prom:9090"/,
  );
  assert.throws(() => choosePrometheus({ url: 'ftp://x' }, env), /invalid --prometheus-url "ftp:\/\/x"/);
  assert.throws(() => choosePrometheus({ service: 'nope' }, env), /invalid --prometheus-service "nope"/);
});
