// A real Prometheus for `npm start` and the tests, with a test-controlled exporter it scrapes
// every second: tests set gauge values and the operator reads them back through Prometheus'
// HTTP API, exactly as in production. The binary is the one built from Go modules into the
// harness cache (test/harness/tools/prometheus, the same pinned version everywhere), else one
// on PATH (e.g. Debian's package); ensurePrometheus builds it when there is neither.

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { BUILD_SCRIPT, defaultBinDir } from './tool-cache.ts';
import { freePorts } from './ports.ts';

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The Prometheus binary: `$AIOPS_PROMETHEUS_BIN` if set (throws when it is not executable),
 * else the one build-control-plane.sh built into the cache, else `prometheus` on PATH;
 * undefined when there is none.
 */
export function findPrometheus(): string | undefined {
  const explicit = process.env['AIOPS_PROMETHEUS_BIN'];
  if (explicit !== undefined) {
    if (executable(explicit)) return explicit;
    throw new Error(`AIOPS_PROMETHEUS_BIN=${explicit} is not an executable file`);
  }
  return [defaultBinDir(), ...(process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')]
    .map((d) => join(d, 'prometheus'))
    .find(executable);
}

const INSTALL = 'install it (Debian/Ubuntu: apt-get install prometheus) or set AIOPS_PROMETHEUS_BIN';

/** The Prometheus binary (see findPrometheus); throws a one-line error saying how to get it. */
export function prometheusBinary(): string {
  const found = findPrometheus();
  if (found !== undefined) return found;
  throw new Error(
    `prometheus is neither in ${defaultBinDir()} nor on PATH: build it (test/harness/build-control-plane.sh prometheus, needs Go), ${INSTALL}`,
  );
}

/**
 * Unless findPrometheus() finds one, builds Prometheus from Go modules into the cache
 * (build-control-plane.sh prometheus: minutes cold), saying so through `log`, with the
 * build's output on stderr. Resolves to the binary.
 */
export async function ensurePrometheus(log: (line: string) => void): Promise<string> {
  const found = findPrometheus();
  if (found !== undefined) return found;
  log('no prometheus in the cache or on PATH: building it from Go modules (minutes, once)');
  await new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, 'prometheus'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `building prometheus from Go modules failed (exit ${String(code)}, output above): ${INSTALL}`,
          ),
        );
    });
  });
  return prometheusBinary();
}

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
 * Starts Prometheus on a free port of `host` (default 127.0.0.1) with storage in a fresh temp
 * dir (removed by `stop`, or when this process exits), scraping `targets` (host:port) every
 * second; resolves once /-/ready answers (deadline `timeoutMs`, default 30 s). Throws at once
 * when there is no Prometheus binary.
 */
export async function startPrometheus(
  targets: readonly string[],
  timeoutMs = 30_000,
  host = '127.0.0.1',
): Promise<Prometheus> {
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: test',
    '    scrape_interval: 1s',
    `    static_configs: [{ targets: [${targets.map((t) => `"${t}"`).join(', ')}] }]`,
  ].join('\n');
  return startPrometheusWithConfig(config, timeoutMs, host);
}

/**
 * Starts Prometheus as startPrometheus does, with `config` (prometheus.yml text: scrape
 * configs, rule files by absolute path) instead of the exporter's one job.
 */
export async function startPrometheusWithConfig(
  config: string,
  timeoutMs = 30_000,
  host = '127.0.0.1',
): Promise<Prometheus> {
  const binary = prometheusBinary();
  // Synchronous, so an exit cannot fall between making the dir and the hook removing it.
  const dir = mkdtempSync(join(tmpdir(), 'aiops-prometheus-'));
  // A process that exits without stop() (Ctrl-C while Prometheus starts: the signal reached
  // the process group before Prometheus joined it) kills it and removes the dir too.
  let child: ChildProcess | undefined = undefined;
  const onExit = (): void => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const [port = 0] = await freePorts(1, host);
  writeFileSync(join(dir, 'prometheus.yml'), config + '\n');
  const running = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${host}:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child = running;
  let output = '';
  const keep = (c: Buffer): void => {
    output = (output + c.toString()).slice(-4000);
  };
  running.stdout.on('data', keep);
  running.stderr.on('data', keep);
  const url = `http://${host}:${port}`;
  const stop = async (): Promise<void> => {
    if (running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGTERM');
      const t = setTimeout(() => running.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    await rm(dir, { recursive: true, force: true });
    process.off('exit', onExit);
  };
  try {
    await ready(url, running, Date.now() + timeoutMs, () => output);
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
