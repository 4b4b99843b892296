// The webhook over real HTTPS: health, metrics, a good review, and every class of bad
// input (oversized, slow client, wrong method, malformed) answered without a crash or
// a hang, with the server still serving afterwards; certificate rotation without restart.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tls from 'node:tls';
import { mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookServer } from './server.ts';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-test-'));
const cert = createServingCert(join(dir, 'a'));
const quiet = createLogger('test', { level: 'error' });

function call(
  port: number,
  method: string,
  path: string,
  body?: string | Buffer,
  ca = cert.caPem,
): Promise<{ status: number; text: string }> {
  return httpsCall(port, path, {
    ca,
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body } : {}),
  });
}

const review = JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: {
    uid: 'abc',
    desiredAPIVersion: 'aiops.example.com/v2',
    objects: [
      {
        apiVersion: 'aiops.example.com/v1alpha1',
        kind: 'AITask',
        metadata: { name: 'a', namespace: 'n' },
        spec: { target: 'web', threshold: 80, action: 'ScaleUp' },
      },
    ],
  },
});

test('webhook over HTTPS', async (t) => {
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: quiet,
    requestTimeoutMs: 1500,
    maxBodyBytes: 64 * 1024,
    certPollMs: 100,
  });
  t.after(async () => {
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });
  const stillServing = async () => {
    const r = await call(server.port, 'GET', '/healthz');
    assert.equal(r.status, 200);
  };

  await t.test('healthz, readyz', async () => {
    assert.equal((await call(server.port, 'GET', '/healthz')).text, 'ok');
    assert.equal((await call(server.port, 'GET', '/readyz')).status, 200);
  });

  await t.test('converts a review', async () => {
    const r = await call(server.port, 'POST', '/convert', review);
    assert.equal(r.status, 200);
    const body = JSON.parse(r.text) as {
      response: { uid: string; convertedObjects: { spec: { trigger: { threshold: number } } }[] };
    };
    assert.equal(body.response.uid, 'abc');
    assert.equal(body.response.convertedObjects[0]?.spec.trigger.threshold, 0.8);
  });

  await t.test('malformed JSON → 400 Failure, still serving', async () => {
    const r = await call(server.port, 'POST', '/convert', '{oops');
    assert.equal(r.status, 400);
    assert.match(r.text, /"status":"Failure".*not valid JSON/);
    await stillServing();
  });

  await t.test('GET /convert → 405', async () => {
    assert.equal((await call(server.port, 'GET', '/convert')).status, 405);
  });

  await t.test('oversized body → 413, still serving', async () => {
    const r = await call(server.port, 'POST', '/convert', Buffer.alloc(200 * 1024, 'x'));
    assert.equal(r.status, 413);
    assert.match(r.text, /exceeds the limit/);
    await stillServing();
  });

  await t.test('slow client is cut off by the request deadline, still serving', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: server.port, ca: cert.caPem, servername: 'localhost' },
        () => {
          socket.write(
            'POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":',
          );
        },
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1.1 408/);
    await stillServing();
  });

  await t.test('metrics count requests and failures; none are served on this port', async () => {
    assert.equal((await call(server.port, 'GET', '/metrics')).status, 404);
    const r = { text: await server.metrics.registry.metrics() };
    assert.match(r.text, /aiops_conversion_requests_total\{code="200",result="Success"\} 1/);
    assert.match(r.text, /aiops_conversion_failures_total\{reason="malformed"\} 1/);
    assert.match(r.text, /aiops_conversion_failures_total\{reason="body_too_large"\} 1/);
    assert.match(r.text, /aiops_conversion_objects_total\{desired="aiops.example.com\/v2"\} 1/);
  });

  await t.test('a rotated certificate is served without a restart', async () => {
    const next = createServingCert(join(dir, 'b'));
    copyFileSync(next.keyFile, cert.keyFile);
    copyFileSync(next.certFile, cert.certFile);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await call(server.port, 'GET', '/healthz', undefined, next.caPem).then(
        (r) => r.status,
        () => 0,
      );
    }
    assert.equal(status, 200, 'the new CA is accepted');
    await assert.rejects(
      call(server.port, 'GET', '/healthz', undefined, cert.caPem),
      'the old CA no longer verifies',
    );
  });
});
