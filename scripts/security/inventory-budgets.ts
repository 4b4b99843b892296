// The shape of one entry of the input-path inventory and the budget phrases several entries
// share: the apiserver reads' page, transport and reconnect budgets and the small listeners'
// connection budget, the latter rendered from lib/connection-budget.ts's defaults so the
// inventory says what the listeners are given.

import { DEFAULT_CONNECTION_BUDGET, type ConnectionBudget } from '../../lib/connection-budget.ts';
import { NAMESPACE_CALLS_BURST, NAMESPACE_CALLS_PER_MINUTE } from '../../operator/reconcile-budget.ts';
import { RECONCILE_DEADLINE_MS } from '../../operator/reconcile-deadline.ts';

/** The budgets of one path. Each is required and says its unit; "none" must say why. */
export interface Budgets {
  /** Bytes per object and per response (or per request, for a listener). */
  readonly bytes: string;
  /** Objects per page and in the cache, or connections held. */
  readonly count: string;
  /** Requests or connections in flight at once. */
  readonly concurrency: string;
  /** Rate per peer, per namespace or per task. */
  readonly rate: string;
  /** Deadlines. */
  readonly time: string;
  /** Who may write what arrives, or reach the port. */
  readonly reach: string;
}

/** A watched or listed kind, another apiserver call, a listener or an outbound call. */
export interface InputPath {
  readonly id: string;
  readonly class: 'watch/list' | 'apiserver call' | 'listener' | 'outbound';
  readonly what: string;
  /** The sites of scan.ts that open this path (`<file>: <what>`). */
  readonly sites: readonly string[];
  readonly budgets: Budgets;
  /** Files that enforce the budgets. */
  readonly enforcedIn: readonly string[];
  /** Test files that prove them. */
  readonly provedBy: readonly string[];
}

/** Who reaches an apiserver read: the apiserver only, carrying what RBAC lets others write. */
export const APISERVER_ONLY =
  'the apiserver of the kubeconfig or in-cluster config only (no redirect is followed); what it returns was written by whoever RBAC lets write that kind';

/** The bytes of a list read page by page through ResourceClient.page. */
export const PAGE_BYTES =
  'a page of 10 (16 MiB of objects as large as etcd stores, 1.5 MiB), its answer refused past 10 × 1.5 MiB + 64 KiB and then read again one object at a time (≤ 9.1 MiB); each page dropped before the next';

/** The bytes of a read of one object by name. */
export const ONE_OBJECT = 'one object, its answer within the transport’s 32 MiB';

/** The time of one request with the transport's default deadline. */
export const TRANSPORT_TIME = 'within the transport’s 30 s';

/** The time of a list read page by page. */
export const PAGE_TIME = `each page ${TRANSPORT_TIME}`;

/** The rate of an informer's list and watch. */
export const RELIST_RATE = 'relist only on 410 Gone; reconnects back off 0.8 s → 30 s, jittered';

/** The concurrency of a client that waits for each answer before the next request. */
export const ONE_AT_A_TIME = 'one request at a time';

/** The bytes of a listener that serves only GET /metrics. */
export const METRICS_GET_ONLY = 'no body is read; GET /metrics only';

/** The files that enforce and prove a listener's connection budget. */
export const CONNECTION_BUDGET_CODE = 'lib/connection-budget.ts';
export const CONNECTION_BUDGET_TEST = 'lib/connection-budget.test.ts';

const seconds = (ms: number): string => `${ms / 1000} s`;

/**
 * What a reconcile off its task's interval may add to a per-interval rate, rendered from
 * operator/reconcile-budget.ts's defaults: each of its outbound calls is one of its
 * namespace's calls.
 */
export const OFF_INTERVAL_CALLS = `at most ${NAMESPACE_CALLS_PER_MINUTE} a minute per namespace (${NAMESPACE_CALLS_BURST} at once) for reconciles off the interval (an annotation, a spec edit, the operator’s own patch, a retry), shared with every other call they make; one cut at its deadline costs one a second it held the worker`;

/** The deadline of a reconcile, rendered from operator/reconcile-deadline.ts. */
export const RECONCILE_TIME = `within the reconcile’s ${seconds(RECONCILE_DEADLINE_MS)} deadline before it acts, moved out by an LLM call’s own bound (past it the reconcile ends, writes nothing, and is retried with backoff)`;

/** The connection caps of a listener under `budget` (default DEFAULT_CONNECTION_BUDGET). */
export function connectionShares(
  beforeTls: boolean,
  budget: ConnectionBudget = DEFAULT_CONNECTION_BUDGET,
): string {
  const tls = beforeTls ? ', before TLS' : '';
  return `${budget.maxConnectionsPerAddress} connections per remote address, ${budget.maxConnections} in all (a smaller holder displaces the biggest), counted from the TCP connection${tls}`;
}

/** The deadlines of a listener under `budget` (default DEFAULT_CONNECTION_BUDGET), with its TLS handshake's when `tls`. */
export function connectionDeadlines(
  tls: boolean,
  budget: ConnectionBudget = DEFAULT_CONNECTION_BUDGET,
): string {
  const handshake = tls
    ? `TLS handshake ${seconds(budget.handshakeTimeoutMs)} from the connection (bytes trickling in do not extend it); `
    : '';
  return `${handshake}headers ${seconds(budget.headersTimeoutMs)} from the first byte, the whole request ${seconds(budget.requestTimeoutMs)}, keep-alive ${seconds(budget.keepAliveTimeoutMs)}, ${seconds(budget.idleTimeoutMs)} without a byte either way`;
}
