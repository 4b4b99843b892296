// Reads one metric value from Prometheus' HTTP API (instant query) and classifies every
// failure — unreachable, bad query, no data, ambiguous result — as a MetricObservation,
// so the reconciler reports it in the MetricsAvailable condition and never acts on it.
// Queries go over node:http with kept-alive connections: fetch allocated several times as
// much per query, garbage that thousands of AITasks turn into resident memory (docs/benchmarks.md).
// Every message lands in tenants' status and Events, so the URL in it is redacted
// (lib/redact.ts: no userinfo, no query string), error texts included.
// Each query carries Prometheus' own `timeout` parameter, the client's timeout: a query the
// operator gives up on is stopped by Prometheus too, instead of running on in its memory.
// The client waits a little longer than that, so what a task reports is
// Prometheus' own answer, which says where the query was stopped.

import * as http from 'node:http';
import * as https from 'node:https';
import { isDnsSubdomain } from '../../api/schema/common.ts';
import type { MetricObservation } from '../decision/decide.ts';
import { BoundedBody, DEFAULT_MAX_RESPONSE_BYTES } from '../runtime/bounded-body.ts';
import { redactUrl, redactUrls } from '../../lib/redact.ts';

interface PromResponse {
  status?: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
}

/**
 * Parses the body of /api/v1/query into an observation (pure); a one-series answer whose
 * `pod` label is a pod's name (a DNS-1123 subdomain) names that pod.
 */
export function parseQueryResponse(httpStatus: number, body: unknown): MetricObservation {
  const r = (typeof body === 'object' && body !== null ? body : {}) as PromResponse;
  if (r.status !== 'success') {
    const message = redactUrls(
      `${r.errorType ?? `HTTP ${httpStatus}`}: ${r.error ?? 'unexpected answer from Prometheus'}`,
    );
    return httpStatus === 400 || httpStatus === 422 || r.errorType === 'bad_data'
      ? { ok: false, reason: 'QueryFailed', message }
      : { ok: false, reason: 'MetricsUnavailable', message };
  }
  const { resultType, result } = r.data ?? {};
  let raw: unknown;
  let pod: unknown;
  if (resultType === 'scalar') raw = Array.isArray(result) ? result[1] : undefined;
  else if (resultType === 'vector' && Array.isArray(result)) {
    if (result.length === 0) return { ok: false, reason: 'NoData', message: 'the query returned no samples' };
    if (result.length > 1)
      return {
        ok: false,
        reason: 'QueryFailed',
        message: `the query returned ${result.length} series; it must return one`,
      };
    const sample = result[0] as { metric?: Record<string, unknown>; value?: unknown[] };
    raw = sample.value?.[1];
    pod = sample.metric?.['pod'];
  } else
    return {
      ok: false,
      reason: 'QueryFailed',
      message: `the query returned a ${resultType ?? 'unknown'}; it must return one sample`,
    };
  const value = typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isFinite(value))
    return { ok: false, reason: 'NoData', message: `the sample is not a finite number (${String(raw)})` };
  return { ok: true, value, ...(isDnsSubdomain(pod) ? { pod } : {}) };
}

/** Reads one metric value; PrometheusClient, or NO_PROMETHEUS when the operator has no URL. */
export interface MetricReader {
  /** Runs `query` now; `signal` aborts it (then MetricsUnavailable); never throws. */
  query(query: string, signal?: AbortSignal): Promise<MetricObservation>;
}

/**
 * What a task reads while the operator was started without a Prometheus URL: nothing is dialled,
 * and every task's MetricsAvailable condition says what to set, in each install path's terms.
 */
export const NO_PROMETHEUS: MetricReader = {
  query: () =>
    Promise.resolve({
      ok: false,
      reason: 'PrometheusNotConfigured',
      message:
        "the operator has no Prometheus URL: set AIOPS_PROMETHEUS_URL on the operator's container " +
        '(plain install: kubectl -n aiops-system set env deployment/aiops-operator AIOPS_PROMETHEUS_URL=<url>; ' +
        "Helm: --set prometheus.url=<url>; OLM: the Subscription's spec.config.env) or pass --prometheus-url",
    }),
};

/** Options of PrometheusClient. */
export interface PrometheusOptions {
  /** Base URL, e.g. `http://prometheus:9090`. */
  readonly url: string;
  /**
   * Per-query timeout in ms (default 5000; fractions allowed), sent as Prometheus' `timeout`
   * parameter, so Prometheus stops the query then; the client gives up ANSWER_GRACE_MS after
   * it, in case Prometheus does not. No retries (the next reconcile asks again), except one
   * for a kept-alive connection closed under it.
   */
  readonly timeoutMs?: number;
  /** Largest answer read, in bytes (default 1 MiB); a larger one is cut off and the query fails. */
  readonly maxResponseBytes?: number;
}

/** How long past the `timeout` sent with a query the client waits for Prometheus' answer, in ms. */
export const ANSWER_GRACE_MS = 500;

/** Error code of an answer over PrometheusOptions.maxResponseBytes. */
const TOO_LARGE = 'ERESPONSETOOLARGE';

/** An instant-query client for one Prometheus. */
export class PrometheusClient implements MetricReader {
  readonly #base: string;
  /** The request options of the base URL (host, port, userinfo, path prefix), worked out once. */
  readonly #target: http.RequestOptions & { readonly path: string };
  readonly #https: boolean;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  /** Idle connections are closed after 30 s, before Prometheus' own idle timeout. */
  readonly #agents = {
    http: new http.Agent({ keepAlive: true, timeout: 30_000 }),
    https: new https.Agent({ keepAlive: true, timeout: 30_000 }),
  };

  constructor(opts: PrometheusOptions) {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      throw new Error(`--prometheus-url "${redactUrl(opts.url)}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`--prometheus-url must be http(s), got ${url.protocol}`);
    this.#base = url.toString().replace(/\/+$/, '');
    // As node:url's urlToHttpOptions has them: no brackets around an IPv6 host, userinfo as auth.
    this.#target = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      ...(url.port !== '' ? { port: Number(url.port) } : {}),
      ...(url.username !== '' || url.password !== ''
        ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
        : {}),
      path: url.pathname.replace(/\/+$/, ''),
    };
    this.#https = url.protocol === 'https:';
    this.#timeoutMs = opts.timeoutMs ?? 5000;
    this.#maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Runs `query` now; `signal` aborts it (the reconcile's deadline: then MetricsUnavailable); never throws. */
  async query(query: string, signal?: AbortSignal): Promise<MetricObservation> {
    // Seconds as a decimal number, which Prometheus reads with strconv.ParseFloat: "5", "0.25".
    // The path is built on the options worked out once: no URL is parsed per query.
    const path = `${this.#target.path}/api/v1/query?query=${encodeURIComponent(query)}&timeout=${this.#timeoutMs / 1000}`;
    let answer: { status: number; text: string };
    try {
      answer = await this.#get(path, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === TOO_LARGE)
        return {
          ok: false,
          reason: 'QueryFailed',
          message: `Prometheus answered with more than ${this.#maxBytes} bytes; the query must return one sample`,
        };
      return {
        ok: false,
        reason: 'MetricsUnavailable',
        message: `Prometheus unreachable at ${redactUrl(this.#base)} (${redactUrls(code ?? (err instanceof Error ? err.message : String(err)))})`,
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text) as unknown;
    } catch {
      body = undefined;
    }
    const observation = parseQueryResponse(answer.status, body);
    const r = (typeof body === 'object' && body !== null ? body : {}) as PromResponse;
    const stopped = r.errorType === 'timeout' || (r.error ?? '').includes('deadline exceeded');
    if (observation.ok || !stopped) return observation;
    return {
      ok: false,
      reason: 'MetricsUnavailable',
      message: `${observation.message} (Prometheus stopped it at the operator's ${this.#timeoutMs / 1000}s query timeout)`,
    };
  }

  /**
   * GET with the per-query timeout plus ANSWER_GRACE_MS (error code ETIMEDOUT). A kept-alive connection that
   * Prometheus closed just as it was reused is retried once on a new one, so an idle-close
   * race never shows as "unreachable".
   */
  #get(
    path: string,
    signal: AbortSignal | undefined,
    retry = true,
  ): Promise<{ status: number; text: string }> {
    const agent = this.#https ? this.#agents.https : this.#agents.http;
    return new Promise((resolve, reject) => {
      const get = this.#https ? https.get : http.get;
      const req = get(
        { ...this.#target, path, agent, ...(signal !== undefined ? { signal } : {}) },
        (res) => {
          const body = new BoundedBody(this.#maxBytes);
          res.on('data', (c: Buffer) => {
            if (!body.push(c))
              req.destroy(
                Object.assign(new Error(`answer over ${this.#maxBytes} bytes`), { code: TOO_LARGE }),
              );
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: body.text() }));
          res.on('error', reject);
        },
      );
      const waitMs = this.#timeoutMs + ANSWER_GRACE_MS;
      req.setTimeout(waitMs, () =>
        req.destroy(Object.assign(new Error(`no answer in ${waitMs} ms`), { code: 'ETIMEDOUT' })),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (retry && req.reusedSocket && err.code === 'ECONNRESET') resolve(this.#get(path, signal, false));
        else reject(err);
      });
    });
  }
}
