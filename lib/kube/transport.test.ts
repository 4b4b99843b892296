// The transport against an HTTPS server on loopback that checks bearer tokens the way the
// apiserver does (a revoked token gets 401): a token file rotated mid-run is read again, a
// 401 is retried exactly once after the credential was read again, an exec plugin's token is
// fetched again once it expired, every request carries our User-Agent, and each request's
// final outcome reaches `onResult` (what rest_client_requests_total counts). Answers past
// their byte bound (a whole answer, a watch line) fail that request with ResponseTooLargeError
// carrying the body's head, and the next request goes through; a list page past its bound is
// read again one object at a time (ResourceClient.page).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { UnauthorizedError } from './errors.ts';
import { pageResponseBytes, ResourceClient } from './resources.ts';
import {
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  RESPONSE_HEAD_BYTES,
  ResponseTooLargeError,
} from './bounded-read.ts';
import { KubeTransport, OPERATOR_USER_AGENT, PLUGIN_USER_AGENT, type RequestResult } from './transport.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-transport-'));
after(() => rmSync(dir, { recursive: true, force: true }));
execFileSync(
  'openssl',
  [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
    ...['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
  ],
  { stdio: 'ignore' },
);
const cert = readFileSync(join(dir, 'cert.pem'));

/** One request as the server saw it. */
interface Seen {
  readonly authorization: string | undefined;
  readonly userAgent: string | undefined;
  readonly status: number;
}

/** An HTTPS "apiserver" on loopback accepting the bearer tokens in `valid` (changed by the test). */
async function apiserver(valid: Set<string>): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    const authorization = req.headers.authorization;
    const ok = authorization !== undefined && valid.has(authorization.replace(/^Bearer /, ''));
    const status = ok ? 200 : 401;
    seen.push({ authorization, userAgent: req.headers['user-agent'], status });
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(
      ok
        ? '{"kind":"Status","status":"Success"}\n{"type":"ADDED"}\n'
        : JSON.stringify({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return { port: (server.address() as AddressInfo).port, seen };
}

/** A kubeconfig for the server at `port` with `user` as the current user's fields. */
function kubeconfig(name: string, port: number, user: Record<string, unknown>): string {
  const path = join(dir, `${name}.kubeconfig`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server: `https://127.0.0.1:${port}`,
          'certificate-authority-data': cert.toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  };
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** Replaces `path` atomically (a new inode), as the kubelet rotates a projected token. */
function rotate(path: string, text: string): void {
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
}

/** An exec plugin printing an ExecCredential with the token (and expiry) that `file` holds. */
function execPlugin(name: string): { file: string; user: Record<string, unknown> } {
  const file = join(dir, `${name}.credential.json`);
  const script = join(dir, `${name}.plugin.mjs`);
  writeFileSync(
    script,
    `import { readFileSync } from 'node:fs';
const status = JSON.parse(readFileSync(process.env.CREDENTIAL_FILE, 'utf8'));
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
  );
  return {
    file,
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [script],
        env: [{ name: 'CREDENTIAL_FILE', value: file }],
        interactiveMode: 'Never',
      },
    },
  };
}

const tokens = (seen: readonly Seen[]): (string | undefined)[] => seen.map((s) => s.authorization);

test('a token file rotated mid-run is read again: the next request carries the new token, without a 401', async () => {
  const valid = new Set(['one']);
  const { port, seen } = await apiserver(valid);
  const tokenFile = join(dir, 'rotated.token');
  writeFileSync(tokenFile, 'one\n');
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('rotated', port, { tokenFile }) });
  await t.request({ path: '/api' });
  rotate(tokenFile, 'two\n');
  valid.delete('one');
  valid.add('two');
  await t.request({ path: '/api' });
  assert.deepEqual(tokens(seen), ['Bearer one', 'Bearer two']);
  assert.deepEqual(
    seen.map((s) => s.status),
    [200, 200],
  );
});

test('a 401 is retried exactly once, after the credential was read again', async () => {
  const valid = new Set(['a']);
  const { port, seen } = await apiserver(valid);
  const plugin = execPlugin('retry');
  writeFileSync(plugin.file, JSON.stringify({ token: 'a' }));
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('retry', port, plugin.user) });
  await t.request({ path: '/api' });
  assert.deepEqual(tokens(seen), ['Bearer a']);

  // Revoked: no expiry told the transport, so only the 401 makes it ask the plugin again.
  writeFileSync(plugin.file, JSON.stringify({ token: 'b' }));
  valid.clear();
  valid.add('b');
  await t.request({ path: '/api' });
  assert.deepEqual(tokens(seen), ['Bearer a', 'Bearer a', 'Bearer b']);

  // Refused whatever is read: exactly two attempts, then Unauthorized.
  valid.clear();
  await assert.rejects(t.request({ path: '/api' }), UnauthorizedError);
  assert.equal(seen.length, 5);

  // A watch is retried the same way.
  writeFileSync(plugin.file, JSON.stringify({ token: 'c' }));
  valid.add('c');
  const lines: string[] = [];
  await t.stream({ path: '/api', query: { watch: true } }, (l) => lines.push(l));
  assert.deepEqual(tokens(seen.slice(5)), ['Bearer b', 'Bearer c']);
  assert.equal(lines.length, 2);
});

test('an exec credential is fetched again once its expirationTimestamp passed', async () => {
  const valid = new Set(['early', 'late']);
  const { port, seen } = await apiserver(valid);
  const plugin = execPlugin('expiry');
  const expiresAt = Date.now() + 4000;
  writeFileSync(
    plugin.file,
    JSON.stringify({ token: 'early', expirationTimestamp: new Date(expiresAt).toISOString() }),
  );
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('expiry', port, plugin.user) });
  await t.request({ path: '/api' });
  writeFileSync(plugin.file, JSON.stringify({ token: 'late' }));
  await t.request({ path: '/api' });
  // Before the expiry the token is reused (unless this machine was too slow to get there in time).
  const reused = Date.now() < expiresAt;
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 100));
  await t.request({ path: '/api' });
  assert.deepEqual(tokens(seen), ['Bearer early', reused ? 'Bearer early' : 'Bearer late', 'Bearer late']);
});

test('every request carries the User-Agent: aiops-operator/<version> by default, the plugin its own', async () => {
  const valid = new Set(['s']);
  const { port, seen } = await apiserver(valid);
  const config = kubeconfig('agent', port, { token: 's' });
  const operator = await KubeTransport.create({ kubeconfig: config });
  await operator.request({ path: '/api' });
  await operator.stream({ path: '/api', query: { watch: true } }, () => undefined);
  const plugin = await KubeTransport.create({ kubeconfig: config, userAgent: PLUGIN_USER_AGENT });
  await plugin.request({ path: '/api' });
  const version = (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  assert.equal(OPERATOR_USER_AGENT, `aiops-operator/${version}`);
  assert.equal(PLUGIN_USER_AGENT, `kubectl-aiops/${version}`);
  assert.deepEqual(
    seen.map((s) => s.userAgent),
    [OPERATOR_USER_AGENT, OPERATOR_USER_AGENT, PLUGIN_USER_AGENT],
  );
  assert.deepEqual(tokens(seen), ['Bearer s', 'Bearer s', 'Bearer s'], 'a static token is sent as before');
});

test('onResult hears each request once, with its final code (a retried 401 is not one), method and host', async () => {
  const valid = new Set(['a']);
  const { port } = await apiserver(valid);
  const plugin = execPlugin('results');
  writeFileSync(plugin.file, JSON.stringify({ token: 'a' }));
  const results: RequestResult[] = [];
  const t = await KubeTransport.create({
    kubeconfig: kubeconfig('results', port, plugin.user),
    onResult: (r) => results.push(r),
  });
  await t.request({ path: '/api' });
  writeFileSync(plugin.file, JSON.stringify({ token: 'b' }));
  valid.clear();
  valid.add('b');
  await t.request({ path: '/api', method: 'PATCH', body: {} }); // 401, read again, 200
  valid.clear();
  await assert.rejects(t.request({ path: '/api', method: 'DELETE' }), UnauthorizedError);
  valid.add('b');
  await t.stream({ path: '/api', query: { watch: true } }, () => undefined);
  const host = `127.0.0.1:${port}`;
  assert.deepEqual(results, [
    { code: '200', method: 'GET', host },
    { code: '200', method: 'PATCH', host },
    { code: '401', method: 'DELETE', host },
    { code: '200', method: 'GET', host },
  ]);

  // Nothing listens: no answer, `<error>`.
  const closed = https.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const dead: RequestResult[] = [];
  const d = await KubeTransport.create({
    kubeconfig: kubeconfig('dead', deadPort, { token: 's' }),
    onResult: (r) => dead.push(r),
  });
  await assert.rejects(d.request({ path: '/api' }));
  await assert.rejects(d.stream({ path: '/api', query: { watch: true } }, () => undefined));
  assert.deepEqual(dead, [
    { code: '<error>', method: 'GET', host: `127.0.0.1:${deadPort}` },
    { code: '<error>', method: 'GET', host: `127.0.0.1:${deadPort}` },
  ]);
});

test('a 429 or 5xx with Retry-After is sent again, body and all, up to 10 times; without the header it is final', async () => {
  /** Answers the first `refusals` requests 429 (as a CRD's storage still initializing does), then 200. */
  const bodies: string[] = [];
  let refusals = 0;
  let retryAfter: string | undefined = '0';
  const server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (refusals > 0) {
        refusals--;
        res.writeHead(429, {
          'Content-Type': 'application/json',
          ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }),
        });
        res.end(
          JSON.stringify({
            kind: 'Status',
            status: 'Failure',
            code: 429,
            reason: 'TooManyRequests',
            message: 'storage is (re)initializing',
            details: { retryAfterSeconds: 1 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"kind":"ConfigMap"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  const results: RequestResult[] = [];
  const t = await KubeTransport.create({
    kubeconfig: kubeconfig('retry-after', port, { token: 's' }),
    onResult: (r) => results.push(r),
  });

  refusals = 3;
  assert.deepEqual(await t.request({ path: '/api/v1/configmaps', method: 'POST', body: { a: 1 } }), {
    kind: 'ConfigMap',
  });
  assert.deepEqual(bodies, ['{"a":1}', '{"a":1}', '{"a":1}', '{"a":1}'], 'the same body each time');
  assert.deepEqual(
    results.map((r) => r.code),
    ['429', '429', '429', '200'],
    'each answer counted, as client-go counts it',
  );

  bodies.length = 0;
  refusals = 100;
  await assert.rejects(t.request({ path: '/api' }), (err: Error) => err.name === 'TooManyRequestsError');
  assert.equal(bodies.length, 11, 'sent once and retried 10 times');

  bodies.length = 0;
  refusals = 1;
  retryAfter = undefined;
  await assert.rejects(t.request({ path: '/api' }), (err: Error) => err.name === 'TooManyRequestsError');
  assert.equal(bodies.length, 1, 'a 429 without Retry-After is final');
});

/**
 * An HTTPS "apiserver" answering by path: `/big?bytes=N` a JSON string of N bytes,
 * `/watch?bytes=N` a short line then a line of N bytes, `/small` a short object, and
 * `/apis/x/v1/namespaces/n/things?limit=L` a list of L objects of `objectBytes` each.
 */
async function sizedServer(objectBytes: number): Promise<{ port: number; limits: number[] }> {
  const limits: number[] = [];
  const server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const bytes = Number(url.searchParams.get('bytes') ?? 0);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (url.pathname === '/big') res.end(JSON.stringify('x'.repeat(bytes)));
    else if (url.pathname === '/watch') res.end(`{"type":"ADDED"}\n${'y'.repeat(bytes)}\n{"type":"NEVER"}\n`);
    else if (url.pathname === '/small') res.end('{"ok":true}');
    else {
      const limit = Number(url.searchParams.get('limit') ?? 0);
      limits.push(limit);
      const items = Array.from({ length: limit }, (_, i) => ({
        metadata: { name: `o${i}` },
        fill: 'z'.repeat(objectBytes),
      }));
      res.end(JSON.stringify({ metadata: { continue: limit === 1 ? 'next' : '' }, items }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return { port: (server.address() as AddressInfo).port, limits };
}

test('the byte bounds by default hold the largest object and page, far under V8 string limits', () => {
  assert.equal(DEFAULT_MAX_RESPONSE_BYTES, 32 * 1024 * 1024);
  assert.equal(DEFAULT_MAX_LINE_BYTES, 10 * 1024 * 1024);
  assert.ok(pageResponseBytes(10) < DEFAULT_MAX_RESPONSE_BYTES);
});

test('an answer past maxResponseBytes fails that request with ResponseTooLargeError and its head; the next goes through', async () => {
  const { port } = await sizedServer(0);
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('sized', port, { token: 's' }) });
  assert.equal(
    await t.request<string>({ path: '/big', query: { bytes: 1000 }, maxResponseBytes: 1002 }),
    'x'.repeat(1000),
  );
  await assert.rejects(
    t.request({ path: '/big', query: { bytes: 1_000_000 }, maxResponseBytes: 100_000 }),
    (err: unknown) => {
      assert.ok(err instanceof ResponseTooLargeError, String(err));
      assert.equal(err.maxBytes, 100_000);
      assert.equal(err.head, `"${'x'.repeat(RESPONSE_HEAD_BYTES - 1)}`);
      assert.match(err.message, /\/big is larger than 100000 bytes/);
      return true;
    },
  );
  // Past the default too: 40 MiB is refused without a bound given.
  await assert.rejects(t.request({ path: '/big', query: { bytes: 40 * 2 ** 20 } }), ResponseTooLargeError);
  assert.deepEqual(await t.request({ path: '/small' }), { ok: true });
});

test('a stream line past maxResponseBytes ends the stream with ResponseTooLargeError, after the lines before it', async () => {
  const { port } = await sizedServer(0);
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('lines', port, { token: 's' }) });
  const lines: string[] = [];
  await assert.rejects(
    t.stream({ path: '/watch', query: { bytes: 200_000 }, maxResponseBytes: 100_000 }, (l) => lines.push(l)),
    (err: unknown) => err instanceof ResponseTooLargeError && err.head === 'y'.repeat(RESPONSE_HEAD_BYTES),
  );
  assert.deepEqual(lines, ['{"type":"ADDED"}']);
  // A line `onLine` throws on ends the stream with that error, not the process.
  await assert.rejects(
    t.stream({ path: '/watch', query: { bytes: 10 } }, () => {
      throw new SyntaxError('not JSON');
    }),
    SyntaxError,
  );
  const all: string[] = [];
  await t.stream({ path: '/watch', query: { bytes: 10 } }, (l) => all.push(l));
  assert.deepEqual(all, ['{"type":"ADDED"}', 'y'.repeat(10), '{"type":"NEVER"}']);
});

test('a list page past its bound is read again as one object, and the list goes on from there', async () => {
  // 2 MiB objects: ten of them pass pageResponseBytes(10), one passes a page of one.
  const { port, limits } = await sizedServer(2 * 2 ** 20);
  const t = await KubeTransport.create({ kubeconfig: kubeconfig('pages', port, { token: 's' }) });
  const things = new ResourceClient<{ metadata: { name: string } }>(t, {
    group: 'x',
    version: 'v1',
    plural: 'things',
    namespaced: true,
  });
  const page = await things.page('n', { limit: 10 });
  assert.deepEqual(limits, [10, 1]);
  assert.deepEqual(
    page.items.map((i) => i.metadata.name),
    ['o0'],
  );
  assert.equal(page.metadata.continue, 'next');
});
