// The limits around the LLM advisor, decided before any byte leaves the operator: which
// endpoints may ever be contacted (`--llm-endpoint-allowlist`: each entry binds scheme, host,
// port and path prefix), how many calls an hour are allowed (per AITask, per namespace and
// overall), whether an API key may travel to an endpoint (never over plain http except to
// loopback), and a circuit breaker per endpoint and model that stops calling after repeated
// failures, kept for a bounded number of pairs. Pure state machines; the clock is a parameter.

import { namespaceOf } from '../../lib/keys.ts';
import { LruMap } from '../../lib/lru-map.ts';

/**
 * One entry of the allow-list, normalised: an endpoint is allowed when its scheme, host and
 * port are these (`port` '' is the scheme's default) and its path is `path` or under it. A
 * wildcard entry matches hosts ending in `.host` (not `host` itself).
 */
export interface AllowRule {
  /** `http:` or `https:`. */
  readonly protocol: string;
  /** Lower-case ASCII (punycode) host name or IP address, as WHATWG URL canonicalises it. */
  readonly host: string;
  readonly wildcard: boolean;
  /** Port as a URL reports it: '' for the scheme's default (80, 443). */
  readonly port: string;
  /** Path prefix, at a segment boundary ('/': any path). */
  readonly path: string;
}

const HOST_PATTERN = /^(\*\.)?([a-z0-9]([a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/;

/**
 * Parses `--llm-endpoint-allowlist`: comma-separated entries, each either a URL prefix
 * (`https://llm.example.com/v1/`, `http://vllm.ai.svc:8000/`: that scheme, host and port — the
 * scheme's default port when none is written — and paths under the prefix's path) or a host
 * pattern (`llm.example.com`, `*.example.com`, `10.0.0.5:8443`: https only, on the given port or
 * 443, any path). Hosts compare as WHATWG URL canonicalises them (lower case, punycode, IPv4 in
 * dotted form); a trailing dot makes a different host. Empty text allows nothing. Throws on a
 * malformed entry.
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
      rules.push({
        protocol: url.protocol,
        host: url.hostname,
        wildcard: false,
        port: url.port,
        path: url.pathname,
      });
      continue;
    }
    const m = HOST_PATTERN.exec(entry.toLowerCase());
    if (!m || (m[4] !== undefined && Number(m[4]) > 65535))
      throw new Error(
        `allow-list entry "${entry}" is neither an http(s) URL prefix nor a host pattern like llm.example.com, *.example.com or 10.0.0.5:8443`,
      );
    const url = new URL(`https://${m[2] ?? ''}${m[4] !== undefined ? `:${m[4]}` : ''}/`);
    rules.push({
      protocol: 'https:',
      host: url.hostname,
      wildcard: m[1] !== undefined,
      port: url.port,
      path: '/',
    });
  }
  return rules;
}

function pathUnder(path: string, prefix: string): boolean {
  if (prefix === '/' || path === prefix) return true;
  return path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

/**
 * True when `endpoint` is an http(s) URL without credentials that some rule allows: same
 * scheme, host (or a subdomain, for a wildcard), port (the scheme's default when none is
 * written, on either side) and a path under the rule's. A path with an encoded slash or
 * backslash (`%2F`, `%5C`) is refused: a server may decode it into a path outside the prefix.
 */
export function endpointAllowed(endpoint: string, rules: readonly AllowRule[]): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username !== '' || url.password !== '') return false;
  if (/%2f|%5c/i.test(url.pathname)) return false;
  return rules.some((r) => {
    const hostOk = r.wildcard ? url.hostname.endsWith(`.${r.host}`) : url.hostname === r.host;
    return hostOk && r.protocol === url.protocol && r.port === url.port && pathUnder(url.pathname, r.path);
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
 * Keys the circuit breaker and the advisor's learned request shapes (each by endpoint, model
 * and namespace) remember at most: 1,000. Allow-list rules may match unboundedly many URLs,
 * and AITask specs name them, so without a bound a tenant could grow the operator's memory by
 * naming new ones.
 */
export const DEFAULT_MAX_ENDPOINTS = 1000;

const HOUR_MS = 3_600_000;

/** Refusal of the call budget: which limit, and when a call is allowed again (ms since the epoch). */
export interface BudgetRefusal {
  readonly scope: 'task' | 'namespace' | 'global';
  readonly retryAt: number;
}

/**
 * Calls per sliding hour, per AITask, per namespace (all its AITasks together, so one tenant
 * cannot spend the whole operator-wide budget) and overall. A call that is refused does not
 * count. Only namespaces with a call in the last hour are kept.
 */
export class CallBudget {
  readonly #perTask: number;
  readonly #perNamespace: number;
  readonly #global: number;
  readonly #tasks = new Map<string, number[]>();
  readonly #namespaces = new Map<string, number[]>();
  #all: number[] = [];

  /**
   * `perTask`, `global` and `perNamespace` calls per hour (0 refuses every call); `perNamespace`
   * defaults to `global` (no share below the operator-wide limit).
   */
  constructor(perTask: number, global: number, perNamespace: number = global) {
    this.#perTask = perTask;
    this.#perNamespace = perNamespace;
    this.#global = global;
  }

  /**
   * Takes one call for the AITask `key` (`namespace/name`) at `now`, or says which limit
   * refuses it (checked in the order task, global, namespace).
   */
  take(key: string, now: number): BudgetRefusal | undefined {
    const recent = (list: readonly number[]): number[] => list.filter((t) => t > now - HOUR_MS);
    const full = (list: readonly number[], limit: number): number | undefined =>
      list.length >= limit ? (list[list.length - limit] ?? now) + HOUR_MS : undefined;
    this.#all = recent(this.#all);
    for (const [ns, list] of this.#namespaces) {
      const kept = recent(list);
      if (kept.length === 0) this.#namespaces.delete(ns);
      else this.#namespaces.set(ns, kept);
    }
    const mine = recent(this.#tasks.get(key) ?? []);
    this.#tasks.set(key, mine);
    const namespace = namespaceOf(key);
    const ours = this.#namespaces.get(namespace) ?? [];
    const task = full(mine, this.#perTask);
    if (task !== undefined) return { scope: 'task', retryAt: task };
    const global = full(this.#all, this.#global);
    if (global !== undefined) return { scope: 'global', retryAt: global };
    const shared = full(ours, this.#perNamespace);
    if (shared !== undefined) return { scope: 'namespace', retryAt: shared };
    mine.push(now);
    ours.push(now);
    this.#namespaces.set(namespace, ours);
    this.#all.push(now);
    return undefined;
  }

  /** Namespaces whose calls of the last hour are kept (at most one per call in the window). */
  get namespaces(): number {
    return this.#namespaces.size;
  }

  /** Drops what is kept for `key` (the AITask is gone); its calls still count for its namespace. */
  forget(key: string): void {
    this.#tasks.delete(key);
  }
}

/**
 * The circuit breaker's key for calls of `model` to `endpoint` made for the AITasks of
 * `namespace`: all three, so failures one tenant causes — a model name the server does not
 * know, a timeout shorter than the server needs, a context that makes the model answer
 * nonsense — suspend that tenant's calls and nobody else's. An endpoint that is down is found
 * out by each namespace on its own, at the cost of `threshold` calls each per cool-off.
 */
export function breakerKey(endpoint: string, model: string, namespace: string): string {
  return JSON.stringify([endpoint, model, namespace]);
}

type BreakerState =
  | { readonly kind: 'closed'; readonly failures: number }
  | { readonly kind: 'open'; readonly until: number }
  | { readonly kind: 'halfOpen' };

/**
 * A circuit breaker per key (the advisor keys it by endpoint, model and namespace, breakerKey,
 * so what one tenant does wrong opens it for that tenant only): `threshold` consecutive failures open
 * it for `coolOffMs`; then one trial call is let through (half-open) — success closes it,
 * failure opens it again. The state of at most `maxEndpoints` keys is kept (default
 * DEFAULT_MAX_ENDPOINTS), least recently used dropped first; a dropped key starts closed
 * again, as if never called.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #coolOffMs: number;
  readonly #state: LruMap<string, BreakerState>;

  /** `threshold` failures in a row open it for `coolOffMs` ms; state kept for `maxEndpoints` keys. */
  constructor(threshold: number, coolOffMs: number, maxEndpoints: number = DEFAULT_MAX_ENDPOINTS) {
    this.#threshold = threshold;
    this.#coolOffMs = coolOffMs;
    this.#state = new LruMap(maxEndpoints);
  }

  /** Keys whose state is kept (at most the `maxEndpoints` bound). */
  get size(): number {
    return this.#state.size;
  }

  /** Whether a call under `key` may go out at `now`; when refused, when it may again. */
  allow(key: string, now: number): { readonly ok: true } | { readonly ok: false; readonly retryAt: number } {
    const s = this.#state.get(key) ?? { kind: 'closed', failures: 0 };
    if (s.kind === 'closed') return { ok: true };
    if (s.kind === 'halfOpen') return { ok: false, retryAt: now + this.#coolOffMs };
    if (now < s.until) return { ok: false, retryAt: s.until };
    this.#state.set(key, { kind: 'halfOpen' });
    return { ok: true };
  }

  /**
   * Keys whose breaker is open at `now` (cooling off, or half-open with its one trial call
   * out): what aiops_llm_circuit_breakers_open reports.
   */
  openCount(now: number): number {
    let n = 0;
    for (const s of this.#state.values())
      if (s.kind === 'halfOpen' || (s.kind === 'open' && now < s.until)) n++;
    return n;
  }

  /** Records a good answer: the breaker closes. */
  success(key: string): void {
    this.#state.set(key, { kind: 'closed', failures: 0 });
  }

  /** Records a failed call at `now`; returns true when the breaker is open afterwards. */
  failure(key: string, now: number): boolean {
    const s = this.#state.get(key) ?? { kind: 'closed', failures: 0 };
    const failures = s.kind === 'closed' ? s.failures + 1 : this.#threshold;
    if (failures >= this.#threshold) {
      this.#state.set(key, { kind: 'open', until: now + this.#coolOffMs });
      return true;
    }
    this.#state.set(key, { kind: 'closed', failures });
    return false;
  }
}
