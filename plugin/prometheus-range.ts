// How `kubectl aiops simulate` reads a metric's history: Prometheus range queries
// (/api/v1/query_range), in kubectl's way through the apiserver's service proxy with the
// user's own credentials (`--prometheus-service NAMESPACE/NAME:PORT`; RBAC: get on
// services/proxy in that namespace), or straight at `--prometheus-url`. The window is read in
// pieces of at most Prometheus' 11,000 points (simulate-window.ts), one after the other, all
// within one deadline; each answer is bounded in bytes and must hold one series at most, as
// the operator's instant query must. Failures are one line each (CliError).

import { ApiError, ForbiddenError, NotFoundError, ServerError } from '../lib/kube/errors.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import { redactUrl } from '../lib/redact.ts';
import type { Sample } from '../operator/decision/replay.ts';
import { CliError, UsageError } from './errors.ts';
import { rangeChunks, STEP_MS, type Window } from './simulate-window.ts';

/** Largest answer read for one range query, in bytes (16 MiB: 11,000 points of one series take under 1 MiB). */
export const MAX_RANGE_ANSWER_BYTES = 16 * 1024 * 1024;

/** A Service Prometheus listens behind: `--prometheus-service NAMESPACE/NAME:PORT`. */
export interface PrometheusService {
  readonly namespace: string;
  readonly name: string;
  /** A port number or name. */
  readonly port: string;
}

/** Where Prometheus is reached. */
export type PrometheusSource =
  | { readonly kind: 'service'; readonly service: PrometheusService; readonly transport: KubeTransport }
  | { readonly kind: 'url'; readonly url: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Parses `NAMESPACE/NAME:PORT`, NAME prefixed with `https:` for a Prometheus serving TLS (the
 * service proxy's own syntax); throws UsageError otherwise.
 */
export function parsePrometheusService(value: string): PrometheusService {
  const m = /^([^/]+)\/(https:)?([^:]+):([^:]+)$/.exec(value);
  const [, namespace = '', scheme = '', name = '', port = ''] = m ?? [];
  if (
    m === null ||
    !DNS_LABEL.test(namespace) ||
    !DNS_LABEL.test(name) ||
    !/^([0-9]{1,5}|[a-z0-9-]{1,15})$/.test(port)
  )
    throw new UsageError(
      `invalid --prometheus-service "${value}": use NAMESPACE/NAME:PORT, e.g. monitoring/prometheus-operated:9090`,
    );
  return { namespace, name: `${scheme}${name}`, port };
}

/**
 * Checks a Prometheus URL (http or https, no query) given as `from` (default the flag
 * `--prometheus-url`; the message names it); throws UsageError otherwise.
 */
export function parsePrometheusUrl(value: string, from = '--prometheus-url'): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol) || new URL(value).search !== '')
    throw new UsageError(
      `invalid ${from} "${redactUrl(value)}": use a URL like http://prometheus.example:9090`,
    );
  return value.replace(/\/+$/, '');
}

/** The environment variable the operator reads its Prometheus URL from; simulate's default too. */
export const PROMETHEUS_URL_ENV = 'AIOPS_PROMETHEUS_URL';

/** Where simulate is told Prometheus is, before any request; `operator`: look it up. */
export type PrometheusChoice =
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'service'; readonly service: PrometheusService }
  | { readonly kind: 'operator' };

/**
 * The precedence of simulate's Prometheus, as kubectl lets the environment default a flag:
 * `--prometheus-url`, then `--prometheus-service` (the two together are a usage error), then
 * AIOPS_PROMETHEUS_URL (empty is unset), then the installed operator's (`operator`). A bad
 * value throws UsageError naming where it came from. Pure.
 */
export function choosePrometheus(
  flags: { readonly url?: string | undefined; readonly service?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): PrometheusChoice {
  if (flags.service !== undefined && flags.url !== undefined)
    throw new UsageError('--prometheus-service and --prometheus-url cannot be combined: give one');
  if (flags.url !== undefined) return { kind: 'url', url: parsePrometheusUrl(flags.url) };
  if (flags.service !== undefined) return { kind: 'service', service: parsePrometheusService(flags.service) };
  const fromEnv = env[PROMETHEUS_URL_ENV];
  if (fromEnv !== undefined && fromEnv !== '')
    return { kind: 'url', url: parsePrometheusUrl(fromEnv, PROMETHEUS_URL_ENV) };
  return { kind: 'operator' };
}

/**
 * The Service an in-cluster Prometheus URL names (`http://NAME.NAMESPACE[.svc[.cluster.local]]:PORT`,
 * the operator's `--prometheus-url`), port 80 or 443 by scheme when none is written; undefined
 * for any other URL. `NAME.NAMESPACE` alone is a Service, as the cluster's DNS search path
 * resolves it inside a Pod (the Helm chart's own example, `prometheus-operated.monitoring`). Pure.
 */
export function serviceOfUrl(url: string): PrometheusService | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  const m = /^([a-z0-9-]+)\.([a-z0-9-]+)(\.svc(\.cluster\.local)?\.?)?$/.exec(u.hostname);
  if (m === null || (u.pathname !== '/' && u.pathname !== '')) return undefined;
  const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
  const scheme = u.protocol === 'https:' ? 'https:' : '';
  return { namespace: m[2] ?? '', name: `${scheme}${m[1] ?? ''}`, port };
}

/** Where `source` is, for messages. */
export function describeSource(source: PrometheusSource): string {
  if (source.kind === 'url') return redactUrl(source.url);
  const s = source.service;
  return `service ${s.namespace}/${s.name}:${s.port} (through the apiserver's service proxy)`;
}

interface RangeAnswer {
  status?: string;
  errorType?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
}

/**
 * The samples of a query_range answer (pure), oldest first; a value that is not a number is
 * kept as NaN (the replay reads it as no data). Throws CliError for an error answer, a result
 * that is not a matrix, or more than one series.
 */
export function parseRangeAnswer(body: unknown): Sample[] {
  const r = (typeof body === 'object' && body !== null ? body : {}) as RangeAnswer;
  if (r.status !== 'success')
    throw new CliError(`Prometheus answered ${r.errorType ?? 'an error'}: ${r.error ?? 'unexpected answer'}`);
  const { resultType, result } = r.data ?? {};
  if (resultType !== 'matrix' || !Array.isArray(result))
    throw new CliError(
      `Prometheus answered a ${resultType ?? 'result of no type'}; a range query gives a matrix`,
    );
  if (result.length > 1)
    throw new CliError(
      `the query returned ${result.length} series; it must return one (the operator reports QueryFailed while it does)`,
    );
  const values = (result[0] as { values?: unknown } | undefined)?.values;
  if (!Array.isArray(values)) return [];
  return values.flatMap((v: unknown) => {
    if (!Array.isArray(v) || typeof v[0] !== 'number') return [];
    return [{ at: Math.round(v[0] * 1000), value: typeof v[1] === 'string' ? Number(v[1]) : NaN }];
  });
}

/** The query_range parameters of one piece. */
function params(query: string, piece: Window, stepMs: number): Record<string, string> {
  return {
    query,
    start: (piece.from / 1000).toFixed(3),
    end: (piece.to / 1000).toFixed(3),
    step: `${stepMs / 1000}s`,
  };
}

/** One range query through the service proxy, its failures in one line. */
async function viaProxy(
  transport: KubeTransport,
  s: PrometheusService,
  query: Record<string, string>,
  signal: AbortSignal,
): Promise<unknown> {
  const path = `/api/v1/namespaces/${s.namespace}/services/${s.name}:${s.port}/proxy/api/v1/query_range`;
  const where = `service ${s.namespace}/${s.name}:${s.port}`;
  try {
    return await transport.request({ path, query, signal, maxResponseBytes: MAX_RANGE_ANSWER_BYTES });
  } catch (err) {
    if (err instanceof ForbiddenError)
      throw new CliError(
        `forbidden to read Prometheus through the service proxy of ${where}: ${err.message} (it needs get on services/proxy in namespace ${s.namespace}, or use --prometheus-url)`,
      );
    if (err instanceof NotFoundError)
      throw new CliError(`${where} not found: ${err.message} (check --prometheus-service)`);
    if (err instanceof ServerError && err.code !== 0)
      throw new CliError(`Prometheus behind ${where} is unreachable: ${err.message}`);
    if (err instanceof ApiError && err.code !== 0)
      throw new CliError(`Prometheus behind ${where} answered ${err.code}: ${err.message}`);
    throw err;
  }
}

/** One range query straight at `url`, its answer read up to MAX_RANGE_ANSWER_BYTES. */
async function viaUrl(url: string, query: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  const target = `${url}/api/v1/query_range?${new URLSearchParams(query).toString()}`;
  let res: Response;
  try {
    res = await fetch(target, { signal, headers: { accept: 'application/json' } });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new CliError(`Prometheus at ${redactUrl(url)} is unreachable: ${(err as Error).message}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_RANGE_ANSWER_BYTES)
    throw new CliError(
      `Prometheus at ${redactUrl(url)} answered ${declared} bytes; at most ${MAX_RANGE_ANSWER_BYTES} are read`,
    );
  const text = await res.text();
  if (text.length > MAX_RANGE_ANSWER_BYTES)
    throw new CliError(`Prometheus at ${redactUrl(url)} answered over ${MAX_RANGE_ANSWER_BYTES} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliError(`Prometheus at ${redactUrl(url)} answered HTTP ${res.status} that is not JSON`);
  }
  if (res.status === 401 || res.status === 403)
    throw new CliError(`Prometheus at ${redactUrl(url)} refused the request (HTTP ${res.status})`);
  return body;
}

/** What reading a window reports as it goes: pieces read of all. */
export type Progress = (done: number, of: number) => void;

/**
 * The samples of `query` over `window` at STEP_MS, read piece by piece from `source`, oldest
 * first. `deadlineMs` bounds the whole read (0: none); past it the read fails with one line.
 * No retries: a failing piece fails the command.
 */
export async function readRange(
  source: PrometheusSource,
  query: string,
  window: Window,
  deadlineMs: number,
  progress?: Progress,
): Promise<Sample[]> {
  const pieces = rangeChunks(window, STEP_MS);
  const signal = deadlineMs > 0 ? AbortSignal.timeout(deadlineMs) : new AbortController().signal;
  const samples: Sample[] = [];
  try {
    for (const [i, piece] of pieces.entries()) {
      const q = params(query, piece, STEP_MS);
      const body =
        source.kind === 'service'
          ? await viaProxy(source.transport, source.service, q, signal)
          : await viaUrl(source.url, q, signal);
      samples.push(...parseRangeAnswer(body));
      progress?.(i + 1, pieces.length);
    }
  } catch (err) {
    if (signal.aborted)
      throw new CliError(
        `Prometheus (${describeSource(source)}) did not answer the ${pieces.length} range queries within --request-timeout ${deadlineMs / 1000}s`,
      );
    throw err;
  }
  return samples;
}
