// The one way our code talks to the apiserver: plain HTTPS requests with typed errors and our
// User-Agent, over the connection connection.ts loads from a kubeconfig. Bearer credentials
// that change while the process runs (a token file, an exec plugin's token) are read per
// request, and a request answered 401 is sent once more after reading them again; other auth
// is fixed at load. A request the apiserver refused with Retry-After (429, 5xx) is sent again
// as client-go does. Every body it reads is bounded in bytes (bounded-read.ts: a request's
// whole answer, a watch's each line): past the bound that request fails with
// ResponseTooLargeError, so no answer can grow the process past its memory limit.

import * as http from 'node:http';
import * as https from 'node:https';
import pkg from '../../package.json' with { type: 'json' };
import {
  AnswerBody,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  LineReader,
  LineTooLong,
  ResponseTooLargeError,
} from './bounded-read.ts';
import { loadConnection } from './connection.ts';
import type { CredentialSource } from './credentials.ts';
import { apiErrorFrom, ServerError, UnauthorizedError } from './errors.ts';
import type { ConnectionOverrides } from './overrides.ts';
import { MAX_RETRY_AFTER_RETRIES, pause, retryAfterMs } from './retry-after.ts';

/** This build's version, package.json's (api/releases.ts keeps it the newest release). */
const VERSION = pkg.version;
/** User-Agent of the operator's requests (the transport's default): `aiops-operator/<version>`. */
export const OPERATOR_USER_AGENT = `aiops-operator/${VERSION}`;
/** User-Agent of the kubectl plugin's requests: `kubectl-aiops/<version>`. */
export const PLUGIN_USER_AGENT = `kubectl-aiops/${VERSION}`;

/** Content types for PATCH. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';
const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface RequestOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path, e.g. `/apis/apps/v1/namespaces/ns/deployments/web`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly patchType?: PatchType;
  /** Per-request timeout in milliseconds (default: the transport's, 30 000). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * Largest body read, in bytes: the whole answer of `request` (default
   * DEFAULT_MAX_RESPONSE_BYTES), each line of `stream` (default DEFAULT_MAX_LINE_BYTES).
   * Past it the request fails with ResponseTooLargeError.
   */
  readonly maxResponseBytes?: number;
}

export interface TransportOptions {
  /** Kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  readonly kubeconfig?: string;
  /** Context to use instead of current-context. */
  readonly context?: string;
  /** Default per-request timeout in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
  /** User-Agent header of every request (default OPERATOR_USER_AGENT). */
  readonly userAgent?: string;
  /**
   * kubectl's connection and impersonation flags (`--server`, `--token`, `--user`, `--as`, …),
   * applied over the kubeconfig with client-go's precedence (overrides.ts); create() throws
   * their OverrideError when they do not fit it. Default none.
   */
  readonly overrides?: ConnectionOverrides;
  /**
   * Called once per answer to a request, except a 401 about to be retried (so a request sent
   * again on Retry-After counts each time, as client-go counts it), and once per stream when
   * the server answers it: how rest_client_requests_total is kept (default none). It must not throw.
   */
  readonly onResult?: (result: RequestResult) => void;
}

/** One request's outcome as client-go's request metrics label it. */
export interface RequestResult {
  /** The HTTP status code, or `<error>` when no answer came (connection refused, timeout, reset). */
  readonly code: string;
  /** The HTTP method: GET, POST, PUT, PATCH, DELETE. */
  readonly method: string;
  /** The apiserver's host[:port], as in its URL. */
  readonly host: string;
}

/** One answer read whole: its status, body and Retry-After header. */
interface Answer {
  readonly status: number;
  readonly text: string;
  readonly retryAfter: string | undefined;
}

/** HTTPS access to one apiserver with the credentials of one kubeconfig context. */
export class KubeTransport {
  /** Base URL of the apiserver, without a trailing slash. */
  readonly server: string;
  /** The context's namespace, or `default`. */
  readonly namespace: string;
  readonly #options: https.RequestOptions;
  readonly #timeoutMs: number;
  readonly #credentials: CredentialSource | undefined;
  readonly #onResult: ((result: RequestResult) => void) | undefined;
  readonly #host: string;

  private constructor(
    server: string,
    namespace: string,
    options: https.RequestOptions,
    timeoutMs: number,
    credentials: CredentialSource | undefined,
    onResult: ((result: RequestResult) => void) | undefined,
  ) {
    this.server = server;
    this.namespace = namespace;
    this.#options = options;
    this.#timeoutMs = timeoutMs;
    this.#credentials = credentials;
    this.#onResult = onResult;
    this.#host = URL.canParse(server) ? new URL(server).host : 'none';
  }

  /**
   * Loads credentials. Throws KubeConfigError with a one-line reason when that fails. A token
   * file (in-cluster, or the user's `tokenFile`) is read again when it changes and at least
   * every minute; an exec plugin runs again when its token expires; both are read again after a 401.
   */
  static async create(opts: TransportOptions = {}): Promise<KubeTransport> {
    const { server, namespace, requestOptions, credentials } = await loadConnection({
      kubeconfig: opts.kubeconfig,
      context: opts.context,
      overrides: opts.overrides,
      userAgent: opts.userAgent ?? OPERATOR_USER_AGENT,
    });
    return new KubeTransport(
      server,
      namespace,
      requestOptions,
      opts.timeoutMs ?? 30_000,
      credentials,
      opts.onResult,
    );
  }

  /**
   * Sends one request and returns the parsed JSON body. Throws a typed ApiError on non-2xx.
   * A 401 is retried once, after the credential was read again; a 429 or 5xx with Retry-After
   * is sent again after the wait it names, up to 10 times (retry-after.ts, as client-go does).
   */
  async request<T>(opts: RequestOptions): Promise<T> {
    let answer: Answer;
    for (let retries = 0; ; retries++) {
      answer = await this.#sendAuthorized(opts);
      const wait = retryAfterMs(answer.status, answer.retryAfter);
      if (wait === undefined || retries === MAX_RETRY_AFTER_RETRIES || opts.signal?.aborted === true) break;
      await pause(wait, opts.signal);
    }
    const { status, text } = answer;
    const body: unknown = text === '' ? undefined : parseJson(text);
    if (status < 200 || status >= 300) throw apiErrorFrom(status, body ?? text);
    return body as T;
  }

  /** One answer, a 401 retried once after reading the credential again; each answer reported. */
  async #sendAuthorized(opts: RequestOptions): Promise<Answer> {
    try {
      let answer = await this.#send(opts, await this.#authorization());
      if (answer.status === 401 && this.#credentials !== undefined) {
        this.#credentials.invalidate();
        answer = await this.#send(opts, await this.#authorization());
      }
      this.#result(opts, String(answer.status));
      return answer;
    } catch (err) {
      this.#result(opts, '<error>');
      throw err;
    }
  }

  /**
   * Opens a streaming GET (a watch) and calls `onLine` for every newline-terminated chunk;
   * `onOpen`, when given, runs once the server has answered 2xx (before any line). Resolves
   * when the server closes the stream; rejects with a typed ApiError on a non-2xx answer.
   * No timeout applies; abort through `signal`. A 401 is retried once, after the credential
   * was read again. A line longer than `maxResponseBytes` (default DEFAULT_MAX_LINE_BYTES), or
   * one `onLine` throws on, ends the stream: it rejects with ResponseTooLargeError, or what
   * `onLine` threw.
   */
  async stream(opts: RequestOptions, onLine: (line: string) => void, onOpen?: () => void): Promise<void> {
    // The answer's status is reported once it is final: a 401 about to be retried is not.
    const state = { answered: false };
    const opened = (status: number, retrying: boolean): void => {
      state.answered = true;
      if (!(retrying && status === 401)) this.#result(opts, String(status));
    };
    try {
      try {
        await this.#stream(opts, await this.#authorization(), onLine, onOpen, (status) =>
          opened(status, this.#credentials !== undefined),
        );
      } catch (err) {
        if (!(err instanceof UnauthorizedError) || this.#credentials === undefined) throw err;
        this.#credentials.invalidate();
        state.answered = false;
        await this.#stream(opts, await this.#authorization(), onLine, onOpen, (status) =>
          opened(status, false),
        );
      }
    } catch (err) {
      if (!state.answered) this.#result(opts, '<error>');
      throw err;
    }
  }

  /** Reports one request's final outcome to `onResult`. */
  #result(opts: RequestOptions, code: string): void {
    this.#onResult?.({ code, method: opts.method ?? 'GET', host: this.#host });
  }

  /** The Authorization header of the next request, if the credential is read per request. */
  async #authorization(): Promise<string | undefined> {
    try {
      return await this.#credentials?.authorization();
    } catch (err) {
      throw transportError(err as Error);
    }
  }

  #stream(
    opts: RequestOptions,
    authorization: string | undefined,
    onLine: (line: string) => void,
    onOpen: (() => void) | undefined,
    onStatus: (status: number) => void,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = this.#open(opts, undefined, authorization, (res) => {
        const status = res.statusCode ?? 0;
        onStatus(status);
        if (status < 200 || status >= 300) {
          const body = new AnswerBody(DEFAULT_MAX_RESPONSE_BYTES);
          res.on('data', (c: Buffer) => {
            if (body.push(c)) return;
            reject(new ResponseTooLargeError(opts.path, body.maxBytes, body.head(), 'the answer'));
            res.destroy();
          });
          res.on('end', () => {
            const text = body.text();
            reject(apiErrorFrom(status, text === '' ? undefined : parseJson(text)));
          });
          return;
        }
        onOpen?.();
        const lines = new LineReader(opts.maxResponseBytes ?? DEFAULT_MAX_LINE_BYTES);
        res.on('data', (chunk: Buffer) => {
          try {
            for (const line of lines.push(chunk)) if (line.trim() !== '') onLine(line);
          } catch (err) {
            reject(
              err instanceof LineTooLong
                ? new ResponseTooLargeError(opts.path, err.maxBytes, err.head, 'a line of the stream')
                : err instanceof Error
                  ? err
                  : new Error(String(err)),
            );
            res.destroy();
          }
        });
        res.on('end', () => resolve());
        res.on('error', (err) => reject(transportError(err)));
        res.on('aborted', () => resolve());
      });
      req.on('error', (err) => (opts.signal?.aborted ? resolve() : reject(transportError(err))));
      req.end();
    });
  }

  /**
   * One request, its body read whole up to `maxResponseBytes` (past it the response is
   * destroyed and the promise rejects with ResponseTooLargeError). The listeners reach the
   * promise only through `settle`, cleared once it is settled: a keep-alive socket keeps its
   * last request and listeners alive, and through the promise they would keep the last answer
   * (a LIST page) until the socket's next request.
   */
  #send(opts: RequestOptions, authorization: string | undefined): Promise<Answer> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    return new Promise((resolve, reject) => {
      let settle: { resolve: typeof resolve; reject: typeof reject } | undefined = { resolve, reject };
      const take = (): typeof settle => {
        const s = settle;
        settle = undefined;
        return s;
      };
      const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
      const req = this.#open(opts, payload, authorization, (res) => {
        let body: AnswerBody | undefined = new AnswerBody(
          opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
        );
        res.on('data', (c: Buffer) => {
          if (body === undefined || body.push(c)) return;
          const refused = new ResponseTooLargeError(opts.path, body.maxBytes, body.head(), 'the answer');
          body = undefined;
          take()?.reject(refused);
          res.destroy();
        });
        res.on('end', () => {
          const text = body?.text() ?? '';
          body = undefined;
          take()?.resolve({
            status: res.statusCode ?? 0,
            text,
            retryAfter: res.headers['retry-after'],
          });
        });
        res.on('error', (err) => take()?.reject(transportError(err)));
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`request timed out after ${timeoutMs} ms`)));
      req.on('error', (err) => take()?.reject(transportError(err)));
      req.end(payload);
    });
  }

  #open(
    opts: RequestOptions,
    payload: string | undefined,
    authorization: string | undefined,
    onResponse: (res: http.IncomingMessage) => void,
  ): http.ClientRequest {
    const url = new URL(this.server + opts.path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: http.OutgoingHttpHeaders = {
      ...(this.#options.headers as http.OutgoingHttpHeaders | undefined),
      Accept: 'application/json',
    };
    if (authorization !== undefined) headers['Authorization'] = authorization;
    if (payload !== undefined) {
      headers['Content-Type'] = opts.patchType ? PATCH_CONTENT_TYPES[opts.patchType] : 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const base = {
      ...this.#options,
      method: opts.method ?? 'GET',
      headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    return url.protocol === 'http:'
      ? http.request(url, base, onResponse)
      : https.request(url, base, onResponse);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function transportError(err: Error): ServerError {
  return new ServerError(0, { message: `cannot reach the apiserver: ${err.message}` }, err.message);
}
