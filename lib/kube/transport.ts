// The one wrapper around @kubernetes/client-node: it loads a kubeconfig (file, $KUBECONFIG
// or in-cluster, any auth the library supports) and turns it into plain HTTPS requests
// with typed errors and our User-Agent. Bearer credentials that change while the process
// runs (a token file, an exec plugin's token) are read per request through credentials.ts,
// and a request answered 401 is sent once more after reading them again; other auth (client
// certificates, static tokens, the library's other auth providers) is fixed at load. A request
// the apiserver refused with Retry-After (429, 5xx) is sent again as client-go does. Every body
// it reads is bounded in bytes (a request's whole answer, a watch's each line): past the bound
// the read stops and that request fails with ResponseTooLargeError, so no answer can grow the
// process past its memory limit or a string past V8's length limit. Everything of ours talks
// to the apiserver through this module, so the library's untyped surfaces stay here.

import * as http from 'node:http';
import * as https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import pkg from '../../package.json' with { type: 'json' };
import { credentialSource, kubeconfigFiles } from './credential-source.ts';
import type { CredentialSource } from './credentials.ts';
import { ApiError, apiErrorFrom, ServerError, UnauthorizedError } from './errors.ts';
import { applyOverrides, hasOverrides, type ConnectionOverrides } from './overrides.ts';
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

/**
 * Largest answer body `request` reads unless told otherwise, in bytes: 32 MiB. It holds the
 * largest JSON one stored object can be sent as (resources.ts MAX_OBJECT_JSON_BYTES, ~9 MiB)
 * and a list page sized by ResourceClient's page budget (16 MiB of objects), each with room
 * to spare, while staying far below V8's string limit (~512 MiB) and a few percent of the
 * shipped 384 MiB memory limit.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * Largest line `stream` reads unless told otherwise, in bytes: 10 MiB, one watch event of the
 * largest JSON a stored object can be sent as (resources.ts MAX_OBJECT_JSON_BYTES, ~9 MiB)
 * with its framing.
 */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Bytes of a refused body kept in ResponseTooLargeError's `head`: 4 KiB. */
export const RESPONSE_HEAD_BYTES = 4096;

/**
 * A body (of a request, or one line of a stream) past its byte bound: the read stopped there
 * and the connection was closed. The request's error, never retried by the transport; the
 * caller may ask again for less (a smaller page) or refuse what it asked for.
 */
export class ResponseTooLargeError extends ApiError {
  /** The bound that was passed, in bytes. */
  readonly maxBytes: number;
  /** The first RESPONSE_HEAD_BYTES bytes of the body, as UTF-8 (a code point cut at the end reads as U+FFFD). */
  readonly head: string;
  constructor(path: string, maxBytes: number, head: string, what: string) {
    const message = `${what} of ${path} is larger than ${maxBytes} bytes; not read`;
    super(0, { message, reason: 'ResponseTooLarge' }, message);
    this.maxBytes = maxBytes;
    this.head = head;
  }
}

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

/** Thrown when the kubeconfig cannot be loaded or names an unknown context. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
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
    const kc = new KubeConfig();
    try {
      if (opts.kubeconfig !== undefined) kc.loadFromFile(opts.kubeconfig);
      else kc.loadFromDefault();
    } catch (err) {
      throw new KubeConfigError(
        `cannot load kubeconfig ${opts.kubeconfig ?? ''}: ${(err as Error).message}`.replace('  ', ' '),
      );
    }
    if (opts.context !== undefined) {
      if (!kc.getContextObject(opts.context))
        throw new KubeConfigError(`context "${opts.context}" does not exist in the kubeconfig`);
      kc.setCurrentContext(opts.context);
    }
    const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
    let impersonation: http.OutgoingHttpHeaders = {};
    let staticToken = false;
    if (opts.overrides !== undefined && hasOverrides(opts.overrides)) {
      const effective = applyOverrides(
        {
          clusters: kc.getClusters(),
          users: kc.getUsers(),
          context: kc.getContextObject(kc.getCurrentContext()) ?? undefined,
        },
        opts.overrides,
      );
      kc.loadFromOptions({
        clusters: [effective.cluster],
        users: [effective.user],
        contexts: [
          { name: 'effective', cluster: effective.cluster.name, user: effective.user.name, namespace },
        ],
        currentContext: 'effective',
      });
      impersonation = Object.fromEntries(
        Object.entries(effective.headers).map(([k, v]) => [k, typeof v === 'string' ? v : [...v]]),
      );
      staticToken = effective.staticToken;
    }
    const cluster = kc.getCurrentCluster();
    if (!cluster)
      throw new KubeConfigError('no current cluster in the kubeconfig (set a context or KUBECONFIG)');
    const requestOptions: https.RequestOptions = {};
    let credentials: CredentialSource | undefined;
    try {
      await kc.applyToHTTPSOptions(requestOptions);
      const headers = { ...(requestOptions.headers as http.OutgoingHttpHeaders | undefined) };
      credentials = staticToken
        ? undefined
        : credentialSource(kc.getCurrentUser(), kubeconfigFiles(opts.kubeconfig));
      if (credentials !== undefined) delete headers['Authorization'];
      requestOptions.headers = {
        ...headers,
        ...impersonation,
        'User-Agent': opts.userAgent ?? OPERATOR_USER_AGENT,
      };
    } catch (err) {
      throw new KubeConfigError(`cannot load credentials: ${(err as Error).message}`);
    }
    requestOptions.agent = keepAlive(requestOptions.agent);
    return new KubeTransport(
      cluster.server.replace(/\/+$/, ''),
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
          const body = new Body(DEFAULT_MAX_RESPONSE_BYTES);
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
        let body: Body | undefined = new Body(opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
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

/** Free sockets are closed after this many ms idle, well before the apiserver's 90 s idle timeout. */
const IDLE_SOCKET_MS = 30_000;

/**
 * The library's plain agent without keep-alive opens a TLS connection (handshake, secure
 * context, buffers) for every request: slow, and the churn of native memory keeps a busy
 * controller's RSS hundreds of MiB high. Reuse connections instead; proxy agents stay as they are.
 */
function keepAlive(agent: http.RequestOptions['agent']): http.RequestOptions['agent'] {
  if (!(agent instanceof http.Agent)) return agent;
  const { options } = agent as http.Agent & { options: https.AgentOptions };
  const reuse = { ...options, keepAlive: true, timeout: IDLE_SOCKET_MS };
  if (agent.constructor === https.Agent) return new https.Agent(reuse);
  if (agent.constructor === http.Agent) return new http.Agent(reuse);
  return agent;
}

/** The chunks of one body, at most `maxBytes` bytes in all, decoded once whole. */
class Body {
  readonly maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Adds a chunk; false (and nothing kept) once the body is past `maxBytes`. */
  push(chunk: Buffer): boolean {
    if (this.#size + chunk.length > this.maxBytes) {
      this.#chunks.push(chunk.subarray(0, Math.max(0, RESPONSE_HEAD_BYTES - this.#size)));
      this.#size = this.maxBytes + 1;
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return true;
  }

  /** The first RESPONSE_HEAD_BYTES bytes, as UTF-8. */
  head(): string {
    return headOf(this.#chunks);
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** The first RESPONSE_HEAD_BYTES bytes of `chunks`, as UTF-8. */
function headOf(chunks: readonly Buffer[]): string {
  const out: Buffer[] = [];
  let n = 0;
  for (const c of chunks) {
    if (n >= RESPONSE_HEAD_BYTES) break;
    const part = c.subarray(0, RESPONSE_HEAD_BYTES - n);
    out.push(part);
    n += part.length;
  }
  return Buffer.concat(out).toString('utf8');
}

/** A line past LineReader's bound: its first bytes. */
class LineTooLong extends Error {
  readonly maxBytes: number;
  readonly head: string;
  constructor(maxBytes: number, head: string) {
    super(`line longer than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
    this.head = head;
  }
}

/**
 * Splits a byte stream into newline-terminated UTF-8 lines of at most `maxBytes` bytes each
 * (the newline not counted); a longer line throws LineTooLong. Lines are cut on bytes: a
 * newline byte is never part of a multi-byte UTF-8 sequence.
 */
export class LineReader {
  readonly maxBytes: number;
  #parts: Buffer[] = [];
  #size = 0;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** The lines `chunk` completes, in order; the rest is kept for the next chunk. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (this.#size + piece.length > this.maxBytes)
        throw new LineTooLong(this.maxBytes, headOf([...this.#parts, piece]));
      if (piece.length > 0) this.#parts.push(piece);
      this.#size += piece.length;
      if (nl < 0) return lines;
      lines.push(Buffer.concat(this.#parts, this.#size).toString('utf8'));
      this.#parts = [];
      this.#size = 0;
      start = nl + 1;
    }
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
