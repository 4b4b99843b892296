// Every dashboard panel and every alert, run on a real Prometheus scraping a real operator
// the way the shipped ServiceMonitor says (HTTPS, a ServiceAccount token bound to the
// aiops-metrics-reader ClusterRole, the hosted conversion webhook's series on the same /metrics): each
// panel's expression and each alert's vector returns series (after one ConversionReview, as
// the apiserver would send), the rule group loads and every rule evaluates without error,
// the alerts whose condition holds go pending (a refused remediation, the Stalled task, the
// test certificate's 2 days) while none meaning an outage does, and a stock controller-runtime
// alert expression evaluates too.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { METRICS_READER_ROLE, metricsReaderClusterRole } from '../../api/rbac.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { findPrometheus, startPrometheusWithConfig } from '../../scripts/lib/prometheus.ts';
import { alertDefs, RULE_GROUP } from '../../scripts/monitoring/alerts.ts';
import { panelQueries } from '../../scripts/monitoring/dashboard.ts';
import { jobName, serviceMonitor } from '../../scripts/monitoring/objects.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { freshNamespace, testAITasks, testTransport } from '../support/cluster.ts';
import { httpsCall } from '../support/https-call.ts';
import { eventually, startOperatorProcess } from '../support/operator.ts';
import { skipUnlessRequired } from '../harness/required.ts';
import { scrapeConfig } from './scrape-config.ts';
import { ROOT } from './tools.ts';

const RBAC = 'rbac.authorization.k8s.io';
const skip =
  skipUnlessRequired(
    'AIOPS_REQUIRE_VALIDATORS',
    findPrometheus() === undefined
      ? 'no prometheus: run bash test/harness/build-control-plane.sh prometheus'
      : undefined,
  ) ?? false;

/** The series an instant query returns. */
async function series(url: string, expr: string): Promise<{ metric: Record<string, string> }[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { result?: [] } };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? res.status}`);
  return body.data?.result ?? [];
}

/** A token of ServiceAccount `name` in `ns`, bound to aiops-metrics-reader (binding removed after the test). */
async function scraperToken(
  ns: string,
  name: string,
  after: (fn: () => Promise<void>) => void,
): Promise<string> {
  const admin = await testTransport();
  await admin
    .request({ method: 'POST', path: `/apis/${RBAC}/v1/clusterroles`, body: metricsReaderClusterRole() })
    .catch((err: unknown) => {
      if (!/already exists/.test((err as Error).message)) throw err;
    });
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts`,
    body: { metadata: { name } },
  });
  const binding = `${name}-${ns}`;
  await admin.request({
    method: 'POST',
    path: `/apis/${RBAC}/v1/clusterrolebindings`,
    body: {
      metadata: { name: binding },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: METRICS_READER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
  });
  after(async () => {
    await admin
      .request({ method: 'DELETE', path: `/apis/${RBAC}/v1/clusterrolebindings/${binding}` })
      .catch(() => undefined);
  });
  const review = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return review.status.token;
}

test(
  'every dashboard panel and alert vector returns series from a real Prometheus scraping a real operator as the ServiceMonitor says',
  { skip },
  async (t) => {
    const ns = await freshNamespace('monitoring-scrape', (fn) => t.after(fn));
    const dir = mkdtempSync(join(tmpdir(), 'aiops-scrape-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, await scraperToken(ns, 'prometheus', (fn) => t.after(fn)));
    const cert = createServingCert(dir);

    // A task whose target is missing: the guardrail refuses it (TargetNotFound) at every reconcile.
    const tasks = await testAITasks('v2');
    await tasks.create(ns, {
      apiVersion: 'aiops.example.com/v2',
      kind: 'AITask',
      metadata: { name: 'orphan' },
      spec: {
        target: { kind: 'Deployment', name: 'missing' },
        trigger: { query: 'up', threshold: 1 },
        remediation: { action: 'Noop' },
        intervalSeconds: 10,
      },
    });
    const [webhookPort = 0] = await freePorts(1);
    const op = await startOperatorProcess(
      [
        `--namespace=${ns}`,
        '--prometheus-url=http://127.0.0.1:1',
        '--leader-elect',
        `--leader-election-namespace=${ns}`,
        `--webhook-port=${webhookPort}`,
        `--webhook-cert-dir=${dir}`,
      ],
      { AIOPS_METRICS_SECURE: 'true', POD_NAMESPACE: ns },
    );
    t.after(async () => {
      await op.stop();
    });

    const job = jobName();
    const prometheus = await startPrometheusWithConfig(
      scrapeConfig(
        serviceMonitor({ namespace: ns }),
        {
          service: job,
          namespace: ns,
          pod: 'aiops-operator-0',
          targets: { https: `127.0.0.1:${op.metricsPort}`, webhook: `127.0.0.1:${webhookPort}` },
          tokenFile,
        },
        [join(ROOT, PATHS.rules)],
      ),
    );
    t.after(() => prometheus.stop());

    await eventually('/metrics scraped with the token, the webhook series on it', async () => {
      const up = await series(prometheus.url, `up{job="${job}"} == 1`);
      const webhook = await series(prometheus.url, `aiops_conversion_failures_total{job="${job}"}`);
      return up.length === 1 && webhook.length > 0 ? true : undefined;
    });
    await eventually('the refused remediation counted', async () =>
      (
        await series(
          prometheus.url,
          `aiops_guardrail_refusals_total{job="${job}",reason="TargetNotFound"} > 0`,
        )
      ).length > 0
        ? true
        : undefined,
    );

    // One conversion, as the apiserver would send it, so the webhook's request series exist.
    const review = await httpsCall(webhookPort, '/convert', {
      ca: cert.caPem,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: {
          uid: 'scrape-1',
          desiredAPIVersion: 'aiops.example.com/v1',
          objects: [
            {
              apiVersion: 'aiops.example.com/v2',
              kind: 'AITask',
              metadata: { name: 'x', namespace: ns },
              spec: {
                target: { kind: 'Deployment', name: 'web' },
                trigger: { threshold: 0.5 },
                remediation: { action: 'RestartPod' },
              },
            },
          ],
        },
      }),
    });
    assert.equal(review.status, 200, review.text);
    assert.match(review.text, /"status":"Success"/);

    const queries = [
      ...panelQueries(job).map((q) => ({ what: `panel "${q.panel}"`, expr: q.expr })),
      ...alertDefs(job).map((a) => ({ what: `alert ${a.alert}'s vector`, expr: a.vector })),
      {
        what: "a stock controller-runtime alert's expression",
        expr: 'sum by (controller) (rate(controller_runtime_reconcile_errors_total[5m]))',
      },
    ];
    const empty: string[] = [];
    for (const q of queries) {
      // Rates need two samples in their window: a few scrapes after the first.
      const got = await eventually(`${q.what} returns series`, async () => {
        const r = await series(prometheus.url, q.expr);
        return r.length > 0 ? r : undefined;
      }).catch(() => []);
      if (got.length === 0) empty.push(`${q.what}: ${q.expr}`);
    }
    assert.deepEqual(empty, [], 'every expression returns series');

    // The rule group is loaded and each rule evaluates without error.
    const rules = await eventually('the rule group evaluated', async () => {
      const res = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
        data: { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] };
      };
      const group = res.data.groups.find((g) => g.name === RULE_GROUP);
      return group?.rules.every((r) => r.health !== 'unknown') === true ? group.rules : undefined;
    });
    assert.deepEqual(
      rules.map((r) => [r.name, r.health, r.lastError ?? '']),
      alertDefs(job).map((a) => [a.alert, 'ok', '']),
    );
    // Alerts whose condition holds go pending for their `for`: the refused remediation, the task
    // it leaves Stalled (its target is missing), and the test's webhook certificate, valid 2 days
    // (createServingCert), under AIOpsCertificateExpiresSoon's 7.
    const pending = ['AIOpsRemediationsRefused', 'AIOpsTasksStalled', 'AIOpsCertificateExpiresSoon'];
    const alerts = await eventually('the alerts whose condition holds are pending', async () => {
      const res = (await (await fetch(`${prometheus.url}/api/v1/alerts`)).json()) as {
        data: { alerts: { labels: Record<string, string>; state: string }[] };
      };
      const list = res.data.alerts;
      return pending.every((p) => list.some((a) => a.labels['alertname'] === p)) ? list : undefined;
    });
    const seen = alerts.map((a) => [
      a.labels['alertname'] ?? '',
      a.labels['reason'] ?? a.labels['pod'] ?? '',
      a.labels['severity'] ?? '',
    ]);
    for (const want of [
      ['AIOpsCertificateExpiresSoon', 'aiops-operator-0', 'warning'],
      ['AIOpsRemediationsRefused', 'TargetNotFound', 'warning'],
      ['AIOpsTasksStalled', '', 'warning'],
    ])
      assert.ok(
        seen.some((a) => a.join() === want.join()),
        `${want.join(' ')} among ${JSON.stringify(seen)}`,
      );
    // Reconcile errors may come and go with the apiserver under load; these may not.
    assert.deepEqual(
      seen.filter(([name]) => /Down|NotLeading|LLM|Conversion|VerySoon/.test(name ?? '')),
      [],
      'the operator is up and leading, no breaker is open, conversions succeed, the certificate has more than a day',
    );
  },
);
