// Conversion benchmarks: ConversionReviews of 1, 100 and 1,500 objects
// against the real HTTPS webhook, compared with same-version reviews (protocol cost
// only) in the same run; and on the real apiserver, a LIST of 10,000 AITasks at v1
// (through the webhook) against the same LIST at the storage version v2; and the webhook's
// RSS under N parallel maximum-size reviews against its idle RSS, and one hostile review
// against the honest one of the same size (webhook-memory.ts).

import * as https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { startWebhookServer } from '../../conversion-webhook/server.ts';
import { createLogger } from '../../lib/log.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';
import { AITaskClient } from '../../api/aitask-client.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { v1alpha1Task } from '../support/arbitraries.ts';
import type { Environment } from '../support/environment.ts';
import { median, ms, percentile, printTable, ratio, timeRuns } from './stats.ts';
import { hostileReviews, webhookMemory } from './webhook-memory.ts';

function post(agent: https.Agent, port: number, ca: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/convert',
        agent,
        ca,
        servername: 'localhost',
        headers: { 'Content-Type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode ?? 0}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function reviewLatency(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-'));
  const cert = createServingCert(dir);
  const server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    cert,
    logger: createLogger('bench', { level: 'error' }),
    // Latency of conversion itself, back to back from one address: not paced by its CPU budget.
    cpuMsPerSecond: Number.MAX_SAFE_INTEGER,
    cpuBurstMs: Number.MAX_SAFE_INTEGER,
    cpuTotalMsPerSecond: Number.MAX_SAFE_INTEGER,
    cpuTotalBurstMs: Number.MAX_SAFE_INTEGER,
  });
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  const rows: string[][] = [];
  try {
    for (const [n, runs] of [
      [1, 2000],
      [100, 300],
      [1500, 40],
    ] as const) {
      const objects = fc.sample(v1alpha1Task, { numRuns: n, seed: 42 });
      const body = (desired: string) =>
        JSON.stringify({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: { uid: 'bench', desiredAPIVersion: desired, objects },
        });
      const convertBody = body('aiops.example.com/v2');
      const sameBody = body('aiops.example.com/v1alpha1');
      await timeRuns(Math.ceil(runs / 10), () => post(agent, server.port, cert.caPem, convertBody));
      const same = await timeRuns(runs, () => post(agent, server.port, cert.caPem, sameBody));
      const conv = await timeRuns(runs, () => post(agent, server.port, cert.caPem, convertBody));
      const p50 = median(conv);
      rows.push([
        String(n),
        ms(p50),
        ms(percentile(conv, 99)),
        `${Math.round((n * 1000) / p50)}`,
        ms(median(same)),
        ratio(p50, median(same)),
      ]);
    }
  } finally {
    agent.destroy();
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    'conversion webhook: v1alpha1 → v2 ConversionReview over HTTPS (baseline: same-version review)',
    ['objects', 'p50', 'p99', 'objects/s', 'baseline p50', 'p50 / baseline'],
    rows,
  );
}

async function listThroughWebhook(env: Environment, count: number): Promise<void> {
  const transport = await KubeTransport.create({
    kubeconfig: env.cluster.kubeconfigPath,
    timeoutMs: 120_000,
  });
  const ns = 'bench-conversion';
  await transport.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  const v2 = new AITaskClient(transport, 'v2');
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const i = next++;
        await v2.create(ns, {
          apiVersion: 'aiops.example.com/v2',
          kind: 'AITask',
          metadata: { name: `t-${i}` },
          spec: {
            target: { kind: 'Deployment', name: `web-${i % 50}` },
            trigger: { threshold: 0.8, forSeconds: 30 },
            remediation: { action: 'ScaleUp', scale: { maxReplicas: 5 } },
            intervalSeconds: 60,
          },
        });
      }
    }),
  );
  const createMs = performance.now() - started;
  const list = (version: string) => () =>
    transport.request({ path: `/apis/aiops.example.com/${version}/namespaces/${ns}/aitasks` });
  // The first LIST at each version pays the conversion of every object; the apiserver's
  // watch cache then keeps each object's encoding per version, so later LISTs mostly do not.
  const [coldStorage] = await timeRuns(1, list('v2'));
  const [coldV1] = await timeRuns(1, list('v1'));
  const [coldAlpha] = await timeRuns(1, list('v1alpha1'));
  const storage = await timeRuns(5, list('v2'));
  const webhook = await timeRuns(5, list('v1'));
  const alpha = await timeRuns(5, list('v1alpha1'));
  const cold = (x: number | undefined) => x ?? Number.NaN;
  printTable(
    `apiserver LIST of ${count} AITasks (created in ${ms(createMs)}; first LIST, then median of 5)`,
    ['version', 'first', 'vs storage', 'repeated', 'vs storage'],
    [
      ['v2 (storage, no conversion)', ms(cold(coldStorage)), '1.00×', ms(median(storage)), '1.00×'],
      [
        'v1 (through the webhook)',
        ms(cold(coldV1)),
        ratio(cold(coldV1), cold(coldStorage)),
        ms(median(webhook)),
        ratio(median(webhook), median(storage)),
      ],
      [
        'v1alpha1 (through the webhook)',
        ms(cold(coldAlpha)),
        ratio(cold(coldAlpha), cold(coldStorage)),
        ms(median(alpha)),
        ratio(median(alpha), median(storage)),
      ],
    ],
  );
}

/** Runs the conversion section; `count` AITasks for the LIST (default 10,000). */
export async function bench(env: Environment, count = 10_000): Promise<void> {
  await reviewLatency();
  await webhookMemory();
  await hostileReviews();
  await listThroughWebhook(env, count);
}
