// The Prometheus of `npm run cluster -- up --prometheus`: a real Prometheus (the harness-built
// binary, as npm start and the tests run it) scraping npm start's demo exporter, both started
// detached like the control plane and recorded in the cluster's state file, so `down` stops
// them and `status` lists them. Network: the exporter listens on 127.0.0.1, Prometheus on
// 127.0.0.1 or, with a real node, on the node's host IP (the only host address its Pods reach);
// Prometheus dials only the exporter.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts } from '../../scripts/lib/ports.ts';
import { ensurePrometheus } from '../../scripts/lib/prometheus.ts';
import { HARNESS_DIR } from './paths.ts';
import { spawnComponent, type Component, type ComponentRecord } from './process.ts';
import { NODE_NET } from './real-node/layout.ts';
import { waitFor } from './wait.ts';

/** The demo gauge Prometheus scrapes, as the operator's namespace-confined queries see it. */
export const DEMO_SERIES = 'demo_load{namespace="demo",deployment="web"}';

/** Where the cluster's Prometheus and its exporter answer (kept in the state file). */
export interface LocalPrometheusInfo {
  /** Prometheus' base URL, e.g. http://10.250.0.1:9090: the operator's --prometheus-url. */
  readonly url: string;
  /** The demo exporter's base URL (GET /metrics, POST /load?value=N). */
  readonly exporterUrl: string;
}

/** A started Prometheus with its exporter. */
export interface LocalPrometheus extends LocalPrometheusInfo {
  /** Both processes, for the state file. */
  readonly components: readonly ComponentRecord[];
}

/** Options of `startLocalPrometheus`. */
export interface LocalPrometheusOptions {
  /** The cluster dir: config, storage and logs go to `<dir>/prometheus` and `<dir>/logs`. */
  readonly dir: string;
  /** True when the cluster has a real node: listen on its host IP instead of 127.0.0.1. */
  readonly realNode: boolean;
  /** Prometheus' port; 0 picks a free one. Default `$AIOPS_PROMETHEUS_PORT`, else 9090. */
  readonly port?: number;
  /** Deadline for startup in ms. Default 60000. */
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** The configured port: `$AIOPS_PROMETHEUS_PORT` (0 = a free one), default 9090. */
export function prometheusPort(): number {
  const raw = process.env['AIOPS_PROMETHEUS_PORT'] ?? '9090';
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`AIOPS_PROMETHEUS_PORT=${raw} is not a port number`);
  return port;
}

/** Whether the instant query `promql` at `url` returns at least one sample. */
async function hasSample(url: string, promql: string): Promise<true | undefined> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { data?: { result?: unknown[] } };
  return (body.data?.result?.length ?? 0) > 0 ? true : undefined;
}

/**
 * Starts the demo exporter on a free port of 127.0.0.1 and Prometheus scraping it every
 * second, both detached, and resolves once Prometheus returns the demo series. On failure
 * both are stopped and the error names the log to read (a port already in use shows there).
 */
export async function startLocalPrometheus(opts: LocalPrometheusOptions): Promise<LocalPrometheus> {
  const log = opts.log ?? ((): void => undefined);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const binary = await ensurePrometheus(log);
  const host = opts.realNode ? NODE_NET.hostIP : '127.0.0.1';
  const wanted = opts.port ?? prometheusPort();
  const [exporterPort = 0] = await freePorts(1);
  const port = wanted === 0 ? ((await freePorts(1, host))[0] ?? 0) : wanted;
  const promDir = join(opts.dir, 'prometheus');
  const logDir = join(opts.dir, 'logs');
  await mkdir(promDir, { recursive: true });
  await mkdir(logDir, { recursive: true });
  const config = [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    'scrape_configs:',
    '  - job_name: demo',
    `    static_configs: [{ targets: ["127.0.0.1:${exporterPort}"] }]`,
  ].join('\n');
  await writeFile(join(promDir, 'prometheus.yml'), config + '\n');
  const started: Component[] = [];
  try {
    started.push(
      spawnComponent(
        {
          name: 'demo-exporter',
          binary: process.execPath,
          args: [join(HARNESS_DIR, 'demo-exporter-main.ts'), String(exporterPort)],
        },
        logDir,
        true,
      ),
    );
    started.push(
      spawnComponent(
        {
          name: 'prometheus',
          binary,
          args: [
            `--config.file=${join(promDir, 'prometheus.yml')}`,
            `--storage.tsdb.path=${join(promDir, 'data')}`,
            `--web.listen-address=${host}:${port}`,
            '--log.level=warn',
          ],
        },
        logDir,
        true,
      ),
    );
    const url = `http://${host}:${port}`;
    await waitFor(`Prometheus at ${url} returning ${DEMO_SERIES}`, () => hasSample(url, DEMO_SERIES), {
      deadline,
      watch: started,
      intervalMs: 200,
    });
    log(`Prometheus ${url} scrapes the demo exporter http://127.0.0.1:${exporterPort}`);
    return {
      url,
      exporterUrl: `http://127.0.0.1:${exporterPort}`,
      components: started.map(({ name, pid, binary: b, logPath }) => ({ name, pid, binary: b, logPath })),
    };
  } catch (err) {
    await Promise.all(started.map((c) => c.stop()));
    throw err;
  }
}
