// Webhook memory under load (part of `npm run bench -- conversion`): the standalone
// webhook (cmd/webhook.ts, run with the Node flags of the image's entrypoint),
// at its default body limit and caps, hit by N parallel ConversionReviews of the maximum
// size. Prints, for each N, how many were answered 200, how many 429 (over the cap, with
// Retry-After) and how many otherwise (408 past the request deadline), and the peak RSS (VmHWM) above the idle process — a fresh process per row, so
// each peak is that row's own. The baseline is the idle webhook in the same run. Then one
// hostile review (an object whose status.conditions is millions of zeros, ~8 MB, at each
// version) against the honest review of the maximum size, each alone in a fresh process:
// its answer, the time to it and the peak RSS above idle.

import * as https from 'node:https';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_CONCURRENT_REVIEWS,
  DEFAULT_MAX_IN_FLIGHT_BYTES,
} from '../../conversion-webhook/server.ts';
import { createServingCert } from '../../scripts/lib/certs.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { v1alpha1Task } from '../support/arbitraries.ts';
import { type ServedVersion, zerosReview } from '../support/conversion-reviews.ts';
import { imageRuntime } from '../support/image-runtime.ts';
import { mib, sayer, sleep } from './fixtures.ts';
import { printTable } from './stats.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const say = sayer('webhook-memory');
/** Parallel maximum-size reviews per row. */
const PARALLEL = [1, 2, 4, 8, 16];
/** Wait after start before reading the idle RSS. */
const SETTLE_MS = 3000;

/** `field` (VmRSS, VmHWM) of /proc/`pid`/status in bytes. */
function procBytes(pid: number, field: string): number {
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
    readFileSync(`/proc/${pid}/status`, 'utf8'),
  )?.[1];
  return Number(kb) * 1024;
}

/**
 * A v1alpha1 → v2 ConversionReview just under `maxBytes`: objects of ~3.5 KiB (a generated
 * AITask with a 3,000-byte annotation, as a last-applied-configuration makes them), as many as fit.
 */
function maximumReview(maxBytes: number): Buffer {
  const pad = 'x'.repeat(3000);
  const objects = fc
    .sample(v1alpha1Task, { numRuns: Math.ceil(maxBytes / 3000), seed: 22 })
    .map((o) => ({ ...o, metadata: { ...o.metadata, annotations: { pad } } }));
  const review = (n: number) =>
    Buffer.from(
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'bench', desiredAPIVersion: 'aiops.example.com/v2', objects: objects.slice(0, n) },
      }),
    );
  let lo = 1;
  let hi = objects.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (review(mid).length <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  return review(lo);
}

/** A review of one AITask at `from` whose status.conditions is `zeros` zeros, asking for v2 (v1 from v2). */
function zerosReviewBody(from: ServedVersion, zeros: number): Buffer {
  const desired = from === 'v2' ? 'v1' : 'v2';
  return Buffer.from(zerosReview({ uid: 'bench-hostile', from, desired, namespace: 'bench', zeros }));
}

/** POST /convert with `body`; resolves with the HTTP status, or 0 when the connection failed. */
function post(port: number, ca: string, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/convert',
        ca,
        agent: false,
        servername: 'localhost',
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** Starts the webhook, waits until it answers /healthz and settles; resolves with its pid and a stop. */
async function startWebhook(
  certDir: string,
  ca: string,
): Promise<{ pid: number; port: number; stop: () => Promise<void> }> {
  const runtime = imageRuntime(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const [port = 0] = await freePorts(1);
  const child = spawn(
    process.execPath,
    [
      ...runtime.nodeFlags,
      'cmd/webhook.ts',
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--cert-dir=${certDir}`,
      `--max-body-bytes=${DEFAULT_MAX_BODY_BYTES}`,
      '--log-level=error',
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...runtime.env } },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      https
        .get(
          { host: '127.0.0.1', port, path: '/healthz', ca, servername: 'localhost', agent: false },
          (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          },
        )
        .on('error', () => resolve(false));
    });
    if (ok) break;
    if (i > 600 || child.exitCode !== null) throw new Error('the webhook did not start');
    await sleep(50);
  }
  await sleep(SETTLE_MS);
  return {
    pid: child.pid ?? 0,
    port,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The section's part: RSS of the webhook under N parallel maximum-size reviews vs idle. */
export async function webhookMemory(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-webhook-memory-'));
  try {
    const cert = createServingCert(join(dir, 'cert'));
    const certDir = dirname(cert.certFile);
    const body = maximumReview(DEFAULT_MAX_BODY_BYTES);
    const rows: string[][] = [];
    for (const n of PARALLEL) {
      say(`${n} parallel reviews of ${mib(body.length)}`);
      const w = await startWebhook(certDir, cert.caPem);
      try {
        const idle = procBytes(w.pid, 'VmRSS');
        const codes = await Promise.all(Array.from({ length: n }, () => post(w.port, cert.caPem, body)));
        const peak = procBytes(w.pid, 'VmHWM');
        rows.push([
          String(n),
          String(codes.filter((c) => c === 200).length),
          String(codes.filter((c) => c === 429).length),
          codes
            .filter((c) => c !== 200 && c !== 429)
            .map((c) => (c === 0 ? 'connection lost' : String(c)))
            .join(', ') || '—',
          mib(idle),
          mib(peak),
          mib(peak - idle),
        ]);
      } finally {
        await w.stop();
      }
    }
    printTable(
      `conversion webhook RSS under N parallel maximum-size reviews (${mib(body.length)} each; body limit ${mib(DEFAULT_MAX_BODY_BYTES)}, at most ${DEFAULT_MAX_CONCURRENT_REVIEWS} reviews and ${mib(DEFAULT_MAX_IN_FLIGHT_BYTES)} in flight; baseline: the idle webhook; container limit 384 MiB)`,
      ['parallel', '200', '429', 'other', 'idle RSS', 'peak RSS', 'peak − idle'],
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The section's part: one hostile review (zeros in status.conditions at each version, just
 * under the body limit) against the honest review of the maximum size, each alone in a fresh
 * webhook: the answer, its time and the peak RSS above idle.
 */
export async function hostileReviews(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'aiops-bench-webhook-hostile-'));
  try {
    const cert = createServingCert(join(dir, 'cert'));
    const certDir = dirname(cert.certFile);
    const zeros = Math.floor((DEFAULT_MAX_BODY_BYTES - 1024) / 2);
    const cases: [string, Buffer][] = [
      ['honest, maximum size', maximumReview(DEFAULT_MAX_BODY_BYTES)],
      ['zeros in status.conditions at v1alpha1', zerosReviewBody('v1alpha1', zeros)],
      ['zeros in status.conditions at v1', zerosReviewBody('v1', zeros)],
      ['zeros in status.conditions at v2', zerosReviewBody('v2', zeros)],
    ];
    const rows: string[][] = [];
    for (const [what, body] of cases) {
      say(`${what}: ${mib(body.length)}`);
      const w = await startWebhook(certDir, cert.caPem);
      try {
        const idle = procBytes(w.pid, 'VmRSS');
        const started = performance.now();
        const code = await post(w.port, cert.caPem, body);
        const took = performance.now() - started;
        const peak = procBytes(w.pid, 'VmHWM');
        rows.push([
          what,
          mib(body.length),
          code === 0 ? 'connection lost' : String(code),
          `${Math.round(took)} ms`,
          mib(peak - idle),
        ]);
      } finally {
        await w.stop();
      }
    }
    printTable(
      'conversion webhook: one hostile review against the honest one of the same size, each alone (baseline: the honest review)',
      ['review', 'body', 'answer', 'time to answer', 'peak − idle RSS'],
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
