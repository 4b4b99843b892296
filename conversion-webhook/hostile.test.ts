// The webhook over real HTTPS against what a hostile tenant (or anything that reaches the
// port) can send: a stash with prototype paths or a 5,000-segment path, signed with the
// server's own key so only the bounds stop it; an annotation that is not JSON among good
// objects; an object too deep to serialize. Each review gets a Success without the bad
// stash or a Failure of its own, Object.prototype stays as it was, the rejections are
// counted, and the server goes on answering reviews.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookServer } from './server.ts';
import { createLogger } from '../lib/log.ts';
import { signStash } from '../api/conversion/stash.ts';
import { CONVERSION_ANNOTATION, CONVERSION_MAC_ANNOTATION } from '../api/install.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-hostile-'));
const cert = createServingCert(join(dir, 'certs'));
const key = Buffer.alloc(32, 9);
const G = 'aiops.example.com';

function post(port: number, path: string, body?: string): Promise<{ status: number; text: string }> {
  return httpsCall(port, path, { ca: cert.caPem, ...(body !== undefined ? { body } : {}) });
}

const review = (desired: string, objects: unknown[]): string =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'r-1', desiredAPIVersion: `${G}/${desired}`, objects },
  });

/** A v1 AITask whose stash holds `stash` (text), signed with the server's key when `signed`. */
function v1With(stash: string, signed: boolean, name = 't'): Record<string, unknown> {
  const uid = `uid-${name}`;
  return {
    apiVersion: `${G}/v1`,
    kind: 'AITask',
    metadata: {
      name,
      namespace: 'mallory',
      uid,
      annotations: {
        [CONVERSION_ANNOTATION]: stash,
        ...(signed ? { [CONVERSION_MAC_ANNOTATION]: signStash(key, uid, stash) } : {}),
      },
    },
    spec: { targetDeployment: 'web', threshold: 0.5, action: 'noop', intervalSeconds: 60 },
  };
}

function result(text: string): { status: string; converted: Record<string, unknown>[] } {
  const r = JSON.parse(text) as {
    response: { result: { status: string }; convertedObjects?: Record<string, unknown>[] };
  };
  return { status: r.response.result.status, converted: r.response.convertedObjects ?? [] };
}

test('hostile objects get their own answer and the webhook goes on serving', async (t) => {
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    stashKey: key,
    logger: createLogger('test', { level: 'error' }),
  });
  t.after(async () => {
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  const convert = async (desired: string, objects: unknown[]) => {
    const r = await post(server.port, '/convert', review(desired, objects));
    assert.equal(r.status, 200, r.text);
    return result(r.text);
  };

  await t.test('signed prototype paths are refused, the rest converts', async () => {
    for (const segment of ['__proto__', 'constructor', 'prototype']) {
      const stash = JSON.stringify({
        v2: [
          { p: [segment, 'paused'], v: true },
          { p: ['spec', segment, 'x'], v: 1 },
        ],
      });
      const out = await convert('v2', [v1With(stash, true)]);
      assert.equal(out.status, 'Success');
      const spec = out.converted[0]?.['spec'] as Record<string, unknown>;
      assert.equal(spec['paused'], undefined);
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);
      assert.equal(({} as Record<string, unknown>)['paused'], undefined);
    }
  });

  await t.test('a signed 5,000-segment path is refused', async () => {
    const stash = JSON.stringify({ v1: [{ p: ['spec', ...Array<string>(5000).fill('a')], v: 1 }] });
    const hub = {
      ...v1With(stash, true),
      apiVersion: `${G}/v2`,
      spec: {
        target: { kind: 'Deployment', name: 'web' },
        trigger: { threshold: 1 },
        remediation: { action: 'Noop' },
      },
    };
    const out = await convert('v1', [hub]);
    assert.equal(out.status, 'Success');
  });

  await t.test('a signed out-of-bounds value keeps the base value (intervalSeconds 0)', async () => {
    const stash = JSON.stringify({ v2: [{ p: ['spec', 'intervalSeconds'], v: 0, b: 60 }] });
    const out = await convert('v2', [v1With(stash, true)]);
    assert.equal(out.status, 'Success');
    assert.equal((out.converted[0]?.['spec'] as Record<string, unknown>)['intervalSeconds'], 60);
  });

  await t.test('an annotation that is not JSON does not fail the others', async () => {
    const good = v1With(JSON.stringify({ v1: [] }), true, 'good');
    const out = await convert('v2', [good, v1With('{"v2": [', false, 'bad'), good]);
    assert.equal(out.status, 'Success');
    assert.equal(out.converted.length, 3);
  });

  await t.test('an object nested past any valid AITask is refused before it is walked', async () => {
    const deep = `{"apiVersion":"${G}/v2","kind":"AITask","metadata":{"name":"deep"},"spec":{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"r-deep","desiredAPIVersion":"${G}/v2","objects":[${deep}]}}`;
    const r = await post(server.port, '/convert', body);
    assert.equal(r.status, 200);
    const answer = JSON.parse(r.text) as {
      response: { uid: string; result: { status: string; message: string } };
    };
    assert.equal(answer.response.uid, 'r-deep');
    assert.equal(answer.response.result.status, 'Failure');
    assert.match(answer.response.result.message, /nested deeper than 32 levels/);
  });

  await t.test('afterwards: a good review, every rejection counted', async () => {
    const out = await convert('v1', [
      {
        apiVersion: `${G}/v2`,
        kind: 'AITask',
        metadata: { name: 'ok', namespace: 'alice' },
        spec: {
          target: { kind: 'Deployment', name: 'web' },
          trigger: { threshold: 1 },
          remediation: { action: 'Noop' },
        },
      },
    ]);
    assert.equal(out.status, 'Success');
    const metrics = { text: await server.metrics.registry.metrics() };
    const count = (reason: string): number =>
      Number(
        new RegExp(`aiops_conversion_stash_rejected_total\\{reason="${reason}"\\} (\\d+)`).exec(
          metrics.text,
        )?.[1],
      );
    assert.equal(count('unsafe_path'), 3);
    assert.equal(count('too_large'), 1);
    assert.equal(count('out_of_bounds'), 1);
    assert.equal(count('unsigned'), 1);
    assert.match(metrics.text, /aiops_conversion_failures_total\{reason="internal"\} 0/);
    assert.match(metrics.text, /aiops_conversion_failures_total\{reason="malformed"\} [1-9]/);
  });
});
