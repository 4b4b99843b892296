// The limits around the LLM advisor, decided before any byte leaves the operator: which
// endpoints may ever be contacted (`--llm-endpoint-allowlist`), how many calls an hour are
// allowed (per AITask and overall), whether an API key may travel to an endpoint (never
// over plain http except to loopback), and a circuit breaker per endpoint that stops calling
// after repeated failures, kept for a bounded number of endpoints. Pure state machines; the
// clock is a parameter.

/** One entry of the allow-list: a URL prefix, or a host pattern (any http(s) URL on that host). */
export type AllowRule =
  | { readonly kind: 'prefix'; readonly protocol: string; readonly host: string; readonly path: string }
  | {
      readonly kind: 'host';
      readonly hostname: string;
      readonly wildcard: boolean;
      readonly port: string | undefined;
    };

const HOST_PATTERN = /^(\*\.)?([a-z0-9]([a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/;

/**
 * Parses `--llm-endpoint-allowlist`: comma-separated entries, each either a URL prefix
 * (`https://llm.example.com/v1/`: same scheme, host and port, path under the prefix's path)
 * or a host pattern (`llm.example.com`, `*.example.com`, `127.0.0.1:8080`; no port means
 * any port; http and https). Empty text allows nothing. Throws on a malformed entry.
 */
export function parseAllowlist(text: string): AllowRule[] {
  const rules: AllowRule[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new Error(`allow-list entry "${entry}" is not a URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new Error(`allow-list entry "${entry}" must be http(s)`);
      if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
        throw new Error(`allow-list entry "${entry}" must not carry credentials, a query or a fragment`);
      rules.push({ kind: 'prefix', protocol: url.protocol, host: url.host, path: url.pathname });
      continue;
    }
    const m = HOST_PATTERN.exec(entry.toLowerCase());
    if (!m || (m[4] !== undefined && Number(m[4]) > 65535))
      throw new Error(
        `allow-list entry "${entry}" is neither an http(s) URL prefix nor a host pattern like llm.example.com, *.example.com or 127.0.0.1:8080`,
      );
    rules.push({ kind: 'host', hostname: m[2] ?? '', wildcard: m[1] !== undefined, port: m[4] });
  }
  return rules;
}

function pathUnder(path: string, prefix: string): boolean {
  if (prefix === '/' || path === prefix) return true;
  return path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

/** True when `endpoint` is an http(s) URL without credentials that some rule allows. */
export function endpointAllowed(endpoint: string, rules: readonly AllowRule[]): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username !== '' || url.password !== '') return false;
  return rules.some((r) => {
    if (r.kind === 'prefix')
      return r.protocol === url.protocol && r.host === url.host && pathUnder(url.pathname, r.path);
    const host = url.hostname.toLowerCase();
    const hostOk = r.wildcard ? host.endsWith(`.${r.hostname}`) : host === r.hostname;
    const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
    return hostOk && (r.port === undefined || r.port === port);
  });
}

/** True when `hostname` (a URL's, IPv6 in brackets) is loopback: localhost, 127.0.0.0/8 or ::1. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Why an API key must not be sent to `endpoint`, or undefined when it may: plain `http` is
 * refused unless the host is loopback (the key would cross the network in clear text);
 * `https`, and `http` to loopback, are fine. An endpoint that is not a URL is not refused here
 * (the allow-list refuses it first).
 */
export function keyTransportRefusal(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || isLoopback(url.hostname)) return undefined;
  return `an API key is configured and ${endpoint} is plain http to a host that is not loopback, so the key would cross the network in clear text; it was not contacted (use https, or unset the key for a server that needs none)`;
}

/**
 * A Map holding at most `capacity` entries, least recently used evicted first (a get or a
 * set counts as a use). Map keeps insertion order, so the oldest key is the first.
 */
export class LruMap<K, V> {
  readonly #capacity: number;
  readonly #map = new Map<K, V>();

  /** `capacity`: the most entries kept (at least 1). */
  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The value for `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  /** Sets `key`, the most recently used now, evicting the least recently used when full. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }
}

/**
 * Endpoints the circuit breaker (and the advisor's per-endpoint request shapes) remember at
 * most: 1,000. Allow-list rules may match unboundedly many URLs, and AITask specs name them,
 * so without a bound a tenant could grow the operator's memory by naming new ones.
 */
export const DEFAULT_MAX_ENDPOINTS = 1000;

const HOUR_MS = 3_600_000;

/** Refusal of the call budget: which limit, and when a call is allowed again (ms since the epoch). */
export interface BudgetRefusal {
  readonly scope: 'task' | 'global';
  readonly retryAt: number;
}

/** Calls per sliding hour, per AITask and overall. A call that is refused does not count. */
export class CallBudget {
  readonly #perTask: number;
  readonly #global: number;
  readonly #tasks = new Map<string, number[]>();
  #all: number[] = [];

  /** `perTask` and `global` calls per hour (0 refuses every call). */
  constructor(perTask: number, global: number) {
    this.#perTask = perTask;
    this.#global = global;
  }

  /** Takes one call for `key` at `now`, or says which limit refuses it. */
  take(key: string, now: number): BudgetRefusal | undefined {
    const recent = (list: readonly number[]): number[] => list.filter((t) => t > now - HOUR_MS);
    this.#all = recent(this.#all);
    const mine = recent(this.#tasks.get(key) ?? []);
    this.#tasks.set(key, mine);
    if (mine.length >= this.#perTask)
      return { scope: 'task', retryAt: (mine[mine.length - this.#perTask] ?? now) + HOUR_MS };
    if (this.#all.length >= this.#global)
      return { scope: 'global', retryAt: (this.#all[this.#all.length - this.#global] ?? now) + HOUR_MS };
    mine.push(now);
    this.#all.push(now);
    return undefined;
  }

  /** Drops what is kept for `key` (the AITask is gone). */
  forget(key: string): void {
    this.#tasks.delete(key);
  }
}

type BreakerState =
  | { readonly kind: 'closed'; readonly failures: number }
  | { readonly kind: 'open'; readonly until: number }
  | { readonly kind: 'halfOpen' };

/**
 * A circuit breaker per endpoint: `threshold` consecutive failures open it for `coolOffMs`;
 * then one trial call is let through (half-open) — success closes it, failure opens it again.
 * The state of at most `maxEndpoints` endpoints is kept (default DEFAULT_MAX_ENDPOINTS), least
 * recently used dropped first; a dropped endpoint starts closed again, as if never called.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #coolOffMs: number;
  readonly #state: LruMap<string, BreakerState>;

  /** `threshold` failures in a row open it for `coolOffMs` ms; state kept for `maxEndpoints`. */
  constructor(threshold: number, coolOffMs: number, maxEndpoints: number = DEFAULT_MAX_ENDPOINTS) {
    this.#threshold = threshold;
    this.#coolOffMs = coolOffMs;
    this.#state = new LruMap(maxEndpoints);
  }

  /** Endpoints whose state is kept (at most the `maxEndpoints` bound). */
  get size(): number {
    return this.#state.size;
  }

  /** Whether a call to `endpoint` may go out at `now`; when refused, when it may again. */
  allow(
    endpoint: string,
    now: number,
  ): { readonly ok: true } | { readonly ok: false; readonly retryAt: number } {
    const s = this.#state.get(endpoint) ?? { kind: 'closed', failures: 0 };
    if (s.kind === 'closed') return { ok: true };
    if (s.kind === 'halfOpen') return { ok: false, retryAt: now + this.#coolOffMs };
    if (now < s.until) return { ok: false, retryAt: s.until };
    this.#state.set(endpoint, { kind: 'halfOpen' });
    return { ok: true };
  }

  /** Records a good answer: the breaker closes. */
  success(endpoint: string): void {
    this.#state.set(endpoint, { kind: 'closed', failures: 0 });
  }

  /** Records a failed call at `now`; returns true when the breaker is open afterwards. */
  failure(endpoint: string, now: number): boolean {
    const s = this.#state.get(endpoint) ?? { kind: 'closed', failures: 0 };
    const failures = s.kind === 'closed' ? s.failures + 1 : this.#threshold;
    if (failures >= this.#threshold) {
      this.#state.set(endpoint, { kind: 'open', until: now + this.#coolOffMs });
      return true;
    }
    this.#state.set(endpoint, { kind: 'closed', failures });
    return false;
  }
}
