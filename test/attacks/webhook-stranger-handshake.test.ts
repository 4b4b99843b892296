// Attack: a false critical page. Anyone who reaches the webhook port can open TLS with a
// client that does not trust its CA (curl, as in any pod), and each such handshake counts as
// a certificate rejection. A real Prometheus scrapes the operator as the shipped ServiceMonitor says and
// evaluates the shipped rule group: after 20 strangers' handshakes (the rejections counted
// and scraped), the AIOpsConversionCertificateRejected expression returns nothing, because
// the operator checked the CRD's caBundle and it verifies the served certificate. Then the
// caBundle is really broken (another CA) and a read at v1 fails: the expression returns a
// series, so the alert still fires when the apiserver's conversions fail.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CRD_NAME } from '../../api/schema/common.ts';
import { CRD_RESOURCE, ResourceClient } from '../../lib/kube/resources.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { startPrometheusWithConfig, type Prometheus } from '../../scripts/lib/prometheus.ts';
import { alertDefs } from '../../scripts/monitoring/alerts.ts';
import { jobName, serviceMonitor } from '../../scripts/monitoring/objects.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { scrapeConfig } from '../monitoring/scrape-config.ts';
import { ROOT } from '../monitoring/tools.ts';
import { eventually } from '../support/operator.ts';
import { startStage, type Stage, stopStarted } from './stage.ts';

let stage: Stage;
let prometheus: Prometheus;
const dir = mkdtempSync(join(tmpdir(), 'aiops-stranger-'));
const job = jobName();
const alert = alertDefs(job).find((a) => a.alert === 'AIOpsConversionCertificateRejected');

before(async () => {
  stage = await startStage(() => undefined);
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, stage.scraper.token);
  prometheus = await startPrometheusWithConfig(
    scrapeConfig(
      serviceMonitor({ namespace: 'aiops-system' }),
      {
        service: job,
        namespace: 'aiops-system',
        pod: 'aiops-operator-0',
        targets: { https: `127.0.0.1:${stage.operator.metricsPort}` },
        tokenFile,
      },
      [join(ROOT, PATHS.rules)],
    ),
  );
});
after(async () => {
  await stopStarted(prometheus, stage);
  rmSync(dir, { recursive: true, force: true });
});

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { result?: { metric: Record<string, string>; value: [number, string] }[] };
  };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? res.status}`);
  return body.data?.result ?? [];
}

/**
 * One stranger: `curl` from 127.0.0.7 to the webhook, trusting only the system's CAs (as any
 * pod's curl would), so OpenSSL ends the handshake with an unknown_ca alert; resolves when it exits.
 */
function strangerHandshake(): Promise<void> {
  return new Promise((resolve) => {
    execFile(
      'curl',
      [
        '-sS',
        '--max-time',
        '10',
        '--interface',
        '127.0.0.7',
        `https://127.0.0.1:${stage.webhook.port}/convert`,
      ],
      () => resolve(),
    );
  });
}

test("strangers' handshakes do not move the certificate alert's expression", async () => {
  assert.ok(alert, 'the shipped rule group has AIOpsConversionCertificateRejected');
  // Prometheus must have scraped the counter before the handshakes, else its first sample is
  // already 20 and no rate rises.
  await eventually(
    'the rejections counter scraped before any handshake',
    async () =>
      (await query(`aiops_conversion_certificate_rejections_total{job="${job}"} == 0`)).length > 0
        ? true
        : undefined,
    180_000,
  );
  for (let i = 0; i < 20; i++) await strangerHandshake();
  await eventually(
    'the rejections scraped and rising',
    async () =>
      (await query(`rate(aiops_conversion_certificate_rejections_total{job="${job}"}[1m]) > 0`)).length > 0 &&
      (await query(`aiops_conversion_certificate_rejections_total{job="${job}"} >= 20`)).length > 0
        ? true
        : undefined,
    180_000,
  );
  await eventually(
    "the operator checked the CRD's caBundle after them, and the check was scraped",
    async () =>
      (await query(`aiops_conversion_ca_bundle_checks_total{job="${job}",result="trusted"} >= 1`)).length > 0
        ? true
        : undefined,
    180_000,
  );
  assert.deepEqual(await query(alert.expr), [], 'the alert expression returns nothing');
});

test('a caBundle that does not verify the served certificate moves it', async () => {
  assert.ok(alert);
  const other = createServingCert(join(dir, 'other'));
  const crds = new ResourceClient(stage.admin, CRD_RESOURCE);
  await crds.patch(undefined, CRD_NAME, {
    spec: {
      conversion: { webhook: { clientConfig: { caBundle: Buffer.from(other.caPem).toString('base64') } } },
    },
  });
  await stage.adminTasks.v2.create(stage.alice.namespace, {
    apiVersion: 'aiops.example.com/v2',
    kind: 'AITask',
    metadata: { name: 'convert-me' },
    spec: {
      target: { kind: 'Deployment', name: 'app' },
      trigger: { query: 'up', threshold: 1000 },
      remediation: { action: 'Noop' },
    },
  });
  await eventually(
    'the alert expression returns a series while reads at v1 fail',
    async () => {
      await assert.rejects(stage.alice.tasksV1.get(stage.alice.namespace, 'convert-me'));
      return (await query(alert.expr)).length > 0 ? true : undefined;
    },
    120_000,
  );
});
