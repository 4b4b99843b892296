// Connections the webhook's connection budget closes are counted apart from reviews: with one
// connection per address, a second connection from the same address is closed before any
// request and counted in aiops_conversion_connections_refused_total{reason="address"}, while
// aiops_conversion_failures_total (what the conversion alert reads) stays where it was and a
// review from another address converts. Asserted on the webhook's own counters.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../lib/log.ts';
import { createServingCert } from '../scripts/lib/certs.ts';
import { eventually } from '../test/harness/wait.ts';
import { conversionReview, MINIMAL_SPECS } from '../test/support/conversion-reviews.ts';
import { httpsCall } from '../test/support/https-call.ts';
import { CONNECTION_REFUSAL_REASONS, CONVERSION_FAILURE_REASONS } from './metrics.ts';
import { startWebhookServer } from './server.ts';

const dir = mkdtempSync(join(tmpdir(), 'aiops-webhook-refusals-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const cert = createServingCert(join(dir, 'a'));

/** A plain TCP connection from `from` to `port`, open once connected. */
function connect(port: number, from: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from }, () => resolve(socket));
    socket.once('error', reject);
  });
}

test('a connection over its address’s share is counted as a refused connection, not a failed review', async (t) => {
  const s = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('test', { level: 'error' }),
    maxConnectionsPerPeer: 1,
  });
  t.after(() => s.close(1000));
  const value = async (name: string, reason: string): Promise<number> =>
    (await s.metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels['reason'] === reason)
      ?.value ?? Number.NaN;
  for (const reason of CONNECTION_REFUSAL_REASONS)
    assert.equal(await value('aiops_conversion_connections_refused_total', reason), 0, `${reason} at 0`);

  const held = await connect(s.port, '127.0.0.2');
  t.after(() => held.destroy());
  const second = await connect(s.port, '127.0.0.2');
  await new Promise((resolve) => second.once('close', resolve));
  await eventually(
    'the refusal counted',
    async () =>
      (await value('aiops_conversion_connections_refused_total', 'address')) === 1 ? true : undefined,
    10_000,
    10,
  );
  for (const reason of CONVERSION_FAILURE_REASONS)
    assert.equal(await value('aiops_conversion_failures_total', reason), 0, `no failed review (${reason})`);

  const answer = await httpsCall(s.port, '/convert', {
    ca: cert.caPem,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: conversionReview('other', 'v2', [
      {
        apiVersion: 'aiops.example.com/v1alpha1',
        kind: 'AITask',
        metadata: { name: 'a', namespace: 'n' },
        spec: MINIMAL_SPECS.v1alpha1,
      },
    ]),
  });
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.text, /"status":"Success"/);
});
