// A real Prometheus (the Debian package's /usr/bin/prometheus) for integration tests, with a
// test-controlled exporter it scrapes every second: tests set gauge values and the operator
// reads them back through Prometheus' HTTP API, exactly as in production.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../harness/ports.ts';

/** Path of the Prometheus binary (env AIOPS_PROMETHEUS_BIN, default the Debian package's). */
export const PROMETHEUS_BIN = process.env.AIOPS_PROMETHEUS_BIN ?? '/usr/bin/prometheus';

/** A tiny /metrics endpoint exposing gauges the test sets. */
export interface Exporter {
  /** `host:port` to scrape. */
  readonly address: string;
  /** Sets gauge `name{labels}` to `value`; `undefined` removes the series. */
  set(name: string, labels: Readonly<Record<string, string>>, value: number | undefined): void;
  close(): Promise<void>;
}

/** Starts an exporter on a free port of 127.0.0.1. */
export async function startExporter(): Promise<Exporter> {
  const series = new Map<string, { name: string; text: string; value: number }>();
  const server = http.createServer((_req, res) => {
    const names = [...new Set([...series.values()].map((s) => s.name))];
    const lines = names.flatMap((n) => [
      `# TYPE ${n} gauge`,
      ...[...series.values()].filter((s) => s.name === n).map((s) => `${s.text} ${s.value}`),
    ]);
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
    res.end(lines.join('\n') + '\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    set(name, labels, value) {
      const text = `${name}{${Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',')}}`;
      if (value === undefined) series.delete(text);
      else series.set(text, { name, text, value });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A running Prometheus. */
export interface Prometheus {
  /** Base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  /** Instant query; returns the first sample's value, or undefined when there is none. */
  query(promql: string): Promise<number | undefined>;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s) and removes its storage. */
  stop(): Promise<void>;
}

async function ready(url: string, child: ChildProcess, deadline: number, log: () => string): Promise<void> {
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${log()}`);
    const ok = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`prometheus not ready within the deadline:\n${log()}`);
}

/**
 * Starts Prometheus on a free port with storage in a fresh temp dir, scraping `targets`
 * (host:port) every second; resolves once /-/ready answers (deadline `timeoutMs`, default 30 s).
 */
export async function startPrometheus(targets: readonly string[], timeoutMs = 30_000): Promise<Prometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'aiops-prometheus-'));
  const [port = 0] = await freePorts(1);
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: test',
    '    scrape_interval: 1s',
    `    static_configs: [{ targets: [${targets.map((t) => `"${t}"`).join(', ')}] }]`,
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config + '\n');
  const child = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (c: Buffer): void => {
    output = (output + c.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await ready(url, child, Date.now() + timeoutMs, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { data?: { result?: { value?: [number, string] }[] } };
      const v = body.data?.result?.[0]?.value?.[1];
      return v === undefined ? undefined : Number(v);
    },
    stop,
  };
}
