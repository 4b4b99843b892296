// What a connection may cost a listener, for every port the process serves (the operator's
// probes and metrics, the conversion webhook, the standalone webhook's metrics). Anyone who
// reaches a port can open connections for free and hold them with nothing or a few bytes sent,
// and each held connection costs the process memory (tens of KiB for a TLS handshake in
// progress): without a budget one pod holding thousands takes the process past its memory
// limit. So every listener gives each connection deadlines of seconds (the TLS handshake, the
// request headers, the whole request, keep-alive, inactivity) and each remote address a share
// of a bounded total. The share is what keeps it fair: the kubelet's probes and the metrics
// scraper come from addresses other than an attacker's, so one address at its cap leaves them
// room; and when the total is full, a connection from an address holding fewer displaces the
// oldest connection of the address holding the most (max-min fairness), so several addresses
// together cannot lock out one that holds little (Node's server.maxConnections would refuse
// the newcomer instead, whoever holds the rest). Connections are counted at the raw TCP
// 'connection' event, before any TLS, so a handshake that never ends holds a share too.
// ConnectionShares is the pure bookkeeping; listenerOptions and budgetConnections the adapter.

import type * as http from 'node:http';
import type * as https from 'node:https';
import type { Socket } from 'node:net';

/** Deadlines and caps of one listener. Times in milliseconds, caps in connections. */
export interface ConnectionBudget {
  /**
   * Time from the TCP connection to the end of the TLS handshake (TLS listeners only); bytes
   * trickling in do not extend it.
   */
  readonly handshakeTimeoutMs: number;
  /** Time for a request's headers, from its first byte (from the connection for the first request). */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** Time an idle keep-alive connection is kept between requests. */
  readonly keepAliveTimeoutMs: number;
  /** Time a connection may go without a byte either way (a request never answered, an answer never read). */
  readonly idleTimeoutMs: number;
  /** Connections one remote address may hold at once (at least 1); more are closed at once. */
  readonly maxConnectionsPerAddress: number;
  /** Connections all addresses may hold at once (at least maxConnectionsPerAddress). */
  readonly maxConnections: number;
}

/**
 * The budget of a listener that answers small GETs (probes, /metrics): handshake and headers
 * within 5 s, the whole request within 10 s, keep-alive 5 s (Node's own), 30 s without a byte,
 * 16 connections per remote address and 128 in all. A kubelet probes on a fresh connection
 * every few seconds and a scraper holds one or two, so 16 leave them ample room; 128 TLS
 * handshakes in progress cost under 10 MiB.
 */
export const DEFAULT_CONNECTION_BUDGET: ConnectionBudget = {
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  maxConnectionsPerAddress: 16,
  maxConnections: 128,
};

/** Why a connection was closed by its budget. */
export type ConnectionRefusal =
  /** The new connection's address already held its share. */
  | 'address'
  /** The total was full and no address held more than the new connection's would. */
  | 'full'
  /** An open connection of the address holding the most, closed to make room for a smaller holder. */
  | 'displaced';

/** The outcome of ConnectionShares.open. */
export type Admission<C> =
  | { readonly admitted: true; readonly displaced: C | undefined }
  | { readonly admitted: false; readonly why: 'address' | 'full' };

/**
 * Connections held per remote address within a per-address and a total cap (see the header).
 * Pure: `C` is whatever identifies a connection.
 */
export class ConnectionShares<C> {
  readonly #perAddress: number;
  readonly #total: number;
  /** Each address's connections, oldest first. */
  readonly #held = new Map<string, Set<C>>();
  #count = 0;

  constructor(limits: Pick<ConnectionBudget, 'maxConnectionsPerAddress' | 'maxConnections'>) {
    this.#perAddress = Math.max(1, limits.maxConnectionsPerAddress);
    this.#total = Math.max(this.#perAddress, limits.maxConnections);
  }

  /** Connections held in all now. */
  get count(): number {
    return this.#count;
  }

  /** Connections `address` holds now. */
  countOf(address: string): number {
    return this.#held.get(address)?.size ?? 0;
  }

  /**
   * Counts `conn` of `address`, unless the address holds its share (`address`) or the total is
   * full and no other address holds at least two more than `address` would (`full`). When the
   * total is full and one does, the oldest connection of the address holding the most is no
   * longer counted and returned as `displaced`, for the caller to close.
   */
  open(address: string, conn: C): Admission<C> {
    const mine = this.countOf(address);
    if (mine >= this.#perAddress) return { admitted: false, why: 'address' };
    let displaced: C | undefined;
    if (this.#count >= this.#total) {
      displaced = this.#oldestOfBiggest(mine + 1);
      if (displaced === undefined) return { admitted: false, why: 'full' };
    }
    const set = this.#held.get(address) ?? new Set<C>();
    set.add(conn);
    this.#held.set(address, set);
    this.#count++;
    return { admitted: true, displaced };
  }

  /** `conn` of `address` closed; a connection not counted (refused, displaced, already closed) is ignored. */
  close(address: string, conn: C): void {
    const set = this.#held.get(address);
    if (set?.delete(conn) !== true) return;
    this.#count--;
    if (set.size === 0) this.#held.delete(address);
  }

  /** Uncounts and returns the oldest connection of the address holding the most, when it holds more than `level`. */
  #oldestOfBiggest(level: number): C | undefined {
    let biggest: [string, Set<C>] | undefined;
    for (const entry of this.#held) if (entry[1].size > (biggest?.[1].size ?? level)) biggest = entry;
    if (biggest === undefined) return undefined;
    const oldest = biggest[1].values().next();
    if (oldest.done === true) return undefined;
    this.close(biggest[0], oldest.value);
    return oldest.value;
  }
}

/** The server options that carry `budget`'s deadlines, for `http.createServer` or `https.createServer`. */
export interface ListenerOptions {
  readonly handshakeTimeout: number;
  readonly headersTimeout: number;
  readonly requestTimeout: number;
  readonly keepAliveTimeout: number;
  readonly connectionsCheckingInterval: number;
}

/**
 * The construction options of a listener under `budget` (Node takes the handshake deadline and
 * the interval of its header and request checks only at construction): pass them to
 * `http.createServer` or `https.createServer`, then call budgetConnections. Headers and
 * requests are checked every second, or every headers deadline when shorter.
 */
export function listenerOptions(budget: ConnectionBudget): ListenerOptions {
  return {
    handshakeTimeout: budget.handshakeTimeoutMs,
    headersTimeout: budget.headersTimeoutMs,
    requestTimeout: budget.requestTimeoutMs,
    keepAliveTimeout: budget.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(1, Math.min(budget.headersTimeoutMs, 1000)),
  };
}

/** What budgetConnections reports. */
export interface BudgetedListener {
  /** Connections held in all now. */
  readonly count: number;
  /** Connections `address` holds now. */
  countOf(address: string): number;
}

/**
 * Holds `server`, made with listenerOptions(budget), to `budget`: each connection is counted
 * against its remote address's share and the total as it arrives (ConnectionShares) and closed
 * at once when refused, before the server's own 'connection' listeners (TLS, HTTP) see it; a
 * connection `idleTimeoutMs` without a byte is closed (the other deadlines are Node's, set by
 * listenerOptions). Call it before adding 'connection' listeners of your own. `onClosed` is
 * told of each connection the budget closes, with the address it came from. A closed peer
 * may connect again: it is counted afresh. Throws when the server's deadlines are not the
 * budget's (made without listenerOptions).
 */
export function budgetConnections(
  server: http.Server | https.Server,
  budget: ConnectionBudget,
  onClosed: (why: ConnectionRefusal, address: string) => void = () => undefined,
): BudgetedListener {
  if (
    server.headersTimeout !== budget.headersTimeoutMs ||
    server.requestTimeout !== budget.requestTimeoutMs ||
    server.keepAliveTimeout !== budget.keepAliveTimeoutMs
  )
    throw new Error('the server was not made with listenerOptions(budget)');
  server.setTimeout(budget.idleTimeoutMs);
  const shares = new ConnectionShares<Socket>(budget);
  // The server's own handling of a connection (the TLS handshake, the HTTP parser) runs after
  // the admission and only for what is admitted, so a refused connection costs no TLS state.
  const own = server.listeners('connection');
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const admission = shares.open(address, socket);
    if (!admission.admitted) {
      onClosed(admission.why, address);
      socket.destroy();
      return;
    }
    if (admission.displaced !== undefined) {
      onClosed('displaced', admission.displaced.remoteAddress ?? '');
      admission.displaced.destroy();
    }
    socket.once('close', () => shares.close(address, socket));
    for (const listener of own) Reflect.apply(listener, server, [socket]);
  });
  return {
    get count() {
      return shares.count;
    },
    countOf: (address) => shares.countOf(address),
  };
}
