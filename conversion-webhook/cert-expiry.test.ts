// The webhook reports when the certificate it presents expires
// (aiops_conversion_certificate_expiration_timestamp_seconds, what the shipped
// AIOpsCertificateExpiresSoon alert reads), and every conversion failure reason at 0 before
// the first failure, so the AIOpsConversionFailing alert's rate() sees the first one.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { httpsCall } from '../test/support/https-call.ts';
import { CONVERSION_FAILURE_REASONS } from './metrics.ts';
import { startWebhookServer } from './server.ts';

test("the served certificate's notAfter and every failure reason at 0 are in the metrics from the start", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-cert-expiry-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = createServingCert(dir);
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('test', { level: 'error' }),
  });
  t.after(() => server.close());
  assert.equal(
    (await httpsCall(server.port, '/metrics', { ca: cert.caPem })).status,
    404,
    'not on the webhook port',
  );
  const r = { text: await server.metrics.registry.metrics() };
  const notAfter = Date.parse(new X509Certificate(readFileSync(cert.certFile)).validTo) / 1000;
  const m = /^aiops_conversion_certificate_expiration_timestamp_seconds (\S+)$/m.exec(r.text);
  assert.equal(Number(m?.[1]), notAfter);
  assert.ok(notAfter > Date.now() / 1000, 'a future time');
  for (const reason of CONVERSION_FAILURE_REASONS)
    assert.match(r.text, new RegExp(`^aiops_conversion_failures_total\\{reason="${reason}"\\} 0$`, 'm'));
});
