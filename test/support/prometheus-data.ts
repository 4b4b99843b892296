// A real Prometheus holding exactly the samples a test writes, at the timestamps it chooses:
// the differential tests of query confinement compare answers of two Prometheus servers
// sample for sample, which scraping (one sample a second, at wall-clock times that differ
// between two servers) cannot give. The samples arrive through Prometheus' remote-write
// receiver, encoded here by hand (protobuf WriteRequest, snappy block format with literals
// only) so the tests need no protobuf or snappy package.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../scripts/lib/ports.ts';
import { prometheusBinary } from '../../scripts/lib/prometheus.ts';

/** One series: its labels (`__name__` included) and its samples, oldest first. */
export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly samples: readonly (readonly [timestampMs: number, value: number])[];
}

/** Protobuf base-128 varint of a non-negative safe integer. */
export function varint(n: number): number[] {
  const out: number[] = [];
  let rest = n;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

/** A length-delimited protobuf field (wire type 2). */
function field(num: number, bytes: readonly number[] | Uint8Array): number[] {
  return [...varint((num << 3) | 2), ...varint(bytes.length), ...bytes];
}

/** A protobuf `prometheus.WriteRequest` (remote write 1.0) holding `series`, labels sorted by name. */
export function writeRequest(series: readonly Series[]): Uint8Array {
  const utf8 = new TextEncoder();
  const out: number[] = [];
  for (const s of series) {
    const ts: number[] = [];
    for (const [name, value] of Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      ts.push(...field(1, [...field(1, utf8.encode(name)), ...field(2, utf8.encode(value))]));
    for (const [t, v] of s.samples) {
      const double = new Uint8Array(8);
      new DataView(double.buffer).setFloat64(0, v, true);
      // value: field 1, 64-bit; timestamp: field 2, varint (non-negative here).
      ts.push(...field(2, [0x09, ...double, 0x10, ...varint(t)]));
    }
    out.push(...field(1, ts));
  }
  return Uint8Array.from(out);
}

/** `data` in the snappy block format, as literals only (valid snappy, not compressed). */
export function snappyLiterals(data: Uint8Array): Uint8Array {
  const out: number[] = varint(data.length);
  for (let at = 0; at < data.length; at += 0x10000) {
    const chunk = data.subarray(at, at + 0x10000);
    const n = chunk.length - 1;
    if (n < 60) out.push(n << 2);
    else if (n < 0x100) out.push(60 << 2, n);
    else out.push(61 << 2, n & 0xff, n >> 8);
    out.push(...chunk);
  }
  return Uint8Array.from(out);
}

/** Prometheus' answer to a query, as its HTTP API gives it. */
export interface QueryAnswer {
  readonly status: 'success' | 'error';
  readonly data?: { readonly resultType: string; readonly result: unknown };
  readonly errorType?: string;
  readonly error?: string;
}

/** A running Prometheus loaded with samples. */
export interface DataPrometheus {
  /** Base URL, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  /** Writes `series` through remote write; rejects with Prometheus' answer when it refuses them. */
  write(series: readonly Series[]): Promise<void>;
  /** The answer to the instant query `promql` evaluated at `time` (Unix seconds). */
  query(promql: string, time: number): Promise<QueryAnswer>;
  /** Stops the process and removes its storage. */
  stop(): Promise<void>;
}

/**
 * Starts Prometheus on a free port of 127.0.0.1 with the remote-write receiver, no scrape
 * targets, storage in a temp dir, and `features` (`--enable-feature`) on; resolves once ready.
 */
export async function startDataPrometheus(features: readonly string[] = []): Promise<DataPrometheus> {
  const binary = prometheusBinary();
  const [port = 0] = await freePorts(1);
  const dir = mkdtempSync(join(tmpdir(), 'aiops-prometheus-data-'));
  writeFileSync(join(dir, 'prometheus.yml'), 'global: {}\n');
  const running = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
      '--log.level=warn',
      ...(features.length > 0 ? [`--enable-feature=${features.join(',')}`] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // Synchronous since the dir was made: a test process that exits without stop() takes
  // Prometheus and its storage with it.
  const onExit = (): void => {
    running.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  let log = '';
  running.stderr.on('data', (c: Buffer) => {
    log = (log + c.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', onExit);
  };
  for (const deadline = Date.now() + 120_000; ;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (running.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async write(series) {
      const res = await fetch(`${url}/api/v1/write`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-protobuf',
          'Content-Encoding': 'snappy',
          'X-Prometheus-Remote-Write-Version': '0.1.0',
        },
        body: snappyLiterals(writeRequest(series)),
      });
      if (!res.ok) throw new Error(`remote write refused: ${res.status} ${await res.text()}`);
    },
    async query(promql, time) {
      const res = await fetch(`${url}/api/v1/query`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: promql, time: String(time) }),
      });
      return (await res.json()) as QueryAnswer;
    },
    stop,
  };
}
