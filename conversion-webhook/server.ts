// The HTTPS server of the conversion webhook: POST /convert (ConversionReview),
// GET /healthz and /readyz. Hardened for what the network can send, since any pod reaches the
// port: a body size limit; per remote address a share of the connections (within a total,
// lib/connection-budget.ts), of the bytes held and of the refused bytes read to answer
// cleanly (capacity.ts) and of conversion time (cpu-budget.ts), each within a total, so one address holds at most its share, all of them
// together at most the total, and the apiserver is still served; a slot (by count and bytes; over it, 429 with Retry-After, which the apiserver's
// client honours and retries) taken only once a review's whole body is read; a short
// handshake and header deadline, body and answer deadlines proportional to their size, an
// idle deadline; keep-alive, and a graceful close that lets in-flight reviews finish. This module owns the
// listener, the serving certificate and the stash key; requests.ts handles each request. Its
// metrics are not served here (this port has no authentication): the host serves them (the
// operator on its secure /metrics, `npm run webhook` on its own --metrics-port). Nothing one
// request sends stops the process: an exception while answering (a value too deep to
// serialize, say) is that request's Failure or 500, logged and counted. Runs standalone
// (main.ts) or inside a host process.

import { randomBytes, X509Certificate } from 'node:crypto';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '../lib/log.ts';
import { LogOnce } from '../lib/log-once.ts';
import { MIN_KEY_BYTES } from '../api/conversion/stash.ts';
import { budgetConnections, listenerOptions, type ConnectionBudget } from '../lib/connection-budget.ts';
import {
  bodyDeadlineMs,
  DEFAULT_BODY_TIMEOUT_BASE_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_PEER,
  DEFAULT_MIN_BYTES_PER_SECOND,
  drainLimits,
  PeerShares,
  Slots,
} from './capacity.ts';
import {
  CpuBudget,
  DEFAULT_CPU_ADDRESSES,
  DEFAULT_CPU_BURST_MS,
  DEFAULT_CPU_MS_PER_SECOND,
  DEFAULT_CPU_TOTAL_BURST_MS,
  DEFAULT_CPU_TOTAL_MS_PER_SECOND,
} from './cpu-budget.ts';
import { createMetrics, type WebhookMetrics } from './metrics.ts';
import type { PendingStashKey } from './review.ts';
import { internalError, route, type Ctx } from './requests.ts';
import {
  certPathsIn,
  DEFAULT_CERT_DIR,
  isCertificateRejection,
  readCertPair,
  watchCertPair,
  type CertPaths,
} from '../lib/tls/serving.ts';

/**
 * Default largest request body: 8 MiB. The apiserver sends one ConversionReview per object it
 * reads or writes (an object is at most 1.5 MiB, etcd's request limit) and one per LIST
 * response holding every object of it not at the wanted version, so a LIST's review grows
 * with the list; 8 MiB converts any single object with room to spare and a LIST at another
 * version of ~19,000 AITasks of ~430 bytes (~2,300 of 3.5 KiB). Answering a review peaks at
 * ~10 times its body in RSS (docs/benchmarks.md), so a limit a few times larger could take the
 * 384 MiB container past its limit by itself.
 */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Default cap on ConversionReviews in flight at once: 8. Conversion runs on one thread, so
 * more at once only holds more bodies in memory; small reviews (single objects) still pass
 * beside a large one.
 */
export const DEFAULT_MAX_CONCURRENT_REVIEWS = 8;

/**
 * Default byte budget of the reviews in flight: 10 MiB, one of the largest at a time (which
 * peaks near +80 MiB of RSS; two at once near twice that, too close to the 384 MiB container
 * beside the operator's caches) and 2 MiB beside it for single-object reviews (an object is at
 * most 1.5 MiB). Conversion runs on one thread, so a second large review waits its turn (429,
 * retried by the apiserver a second later) at no cost in throughput.
 */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = DEFAULT_MAX_BODY_BYTES + 2 * 1024 * 1024;

export interface WebhookOptions {
  /** TCP port (default 9443; 0 picks a free one). */
  port?: number;
  /** Bind address (default 0.0.0.0). */
  host?: string;
  /** Certificate and key files (default tls.crt/tls.key in /tmp/k8s-webhook-server/serving-certs). */
  cert?: CertPaths;
  /**
   * Largest accepted request body in bytes (default DEFAULT_MAX_BODY_BYTES, 8 MiB); larger gets
   * 413. A refused body is read and dropped before its answer up to twice this, per address
   * twice this at once and in all DEFAULT_DRAINING_ADDRESSES times that (capacity.ts
   * drainLimits); beyond, the refusal is answered at once.
   */
  maxBodyBytes?: number;
  /**
   * Most ConversionReviews read or converted at once (default DEFAULT_MAX_CONCURRENT_REVIEWS,
   * 8); one more gets 429 with `Retry-After: 1` and its body is discarded unread. The
   * apiserver's client retries a 429 with Retry-After (up to 10 times), so a burst waits
   * instead of failing.
   */
  maxConcurrentReviews?: number;
  /**
   * Most body bytes of reviews holding a slot at once (default DEFAULT_MAX_IN_FLIGHT_BYTES,
   * 10 MiB), each counted by its size once read; a review that would go over gets 429 like one
   * over the count, unless nothing else holds a slot. Also the share of one remote address:
   * the Content-Length (the body limit when none) its requests being read or answered may
   * declare at once (over it, 429 and the connection closed; a request alone of its address
   * always fits); all addresses together may hold twice that, the biggest holders giving way
   * to a smaller one.
   */
  maxInFlightBytes?: number;
  /**
   * Fixed part of each body's deadline in milliseconds (default DEFAULT_BODY_TIMEOUT_BASE_MS,
   * 5 000): a body of n bytes (its Content-Length, else the body limit) must arrive within
   * this plus n at `minBytesPerSecond`, else 408 and the connection closed; an answer must be
   * taken within the same for its size, else the connection is closed.
   */
  requestTimeoutMs?: number;
  /** Slowest rate a body or answer may flow at, in bytes per second (default 1 MiB/s). */
  minBytesPerSecond?: number;
  /** Time for the TLS handshake and the request headers, in milliseconds (default 5 000); slower gets 408. */
  headersTimeoutMs?: number;
  /**
   * Connections one remote address may hold open (default DEFAULT_MAX_CONNECTIONS_PER_PEER, 64);
   * more are closed at once. Every connection the budget closes is counted in
   * aiops_conversion_connections_refused_total, apart from the reviews.
   */
  maxConnectionsPerPeer?: number;
  /**
   * Connections all remote addresses may hold open (default DEFAULT_MAX_CONNECTIONS, 256); one
   * more closes the oldest connection of the address holding the most, or is closed at once
   * when no address holds two more than its own would.
   */
  maxConnections?: number;
  /**
   * Conversion time one remote address earns, in milliseconds per second (default
   * DEFAULT_CPU_MS_PER_SECOND, 250); an address whose reviews took more than it earned (plus
   * `cpuBurstMs`) gets 429 with Retry-After, the seconds until it is out of debt.
   */
  cpuMsPerSecond?: number;
  /** Most conversion time an idle address may use at once, in milliseconds (default DEFAULT_CPU_BURST_MS, 2 500). */
  cpuBurstMs?: number;
  /**
   * Conversion time all remote addresses together earn, in milliseconds per second (default
   * DEFAULT_CPU_TOTAL_MS_PER_SECOND, 500), split between the addresses that used it in the
   * last 10 s (each earns and holds at most its part, cpu-budget.ts); while all of them
   * together are in debt, every review gets 429 with Retry-After, the seconds until the total
   * is out of debt.
   */
  cpuTotalMsPerSecond?: number;
  /** Most conversion time all addresses together may use at once, in milliseconds (default DEFAULT_CPU_TOTAL_BURST_MS, 5 000). */
  cpuTotalBurstMs?: number;
  /** Idle keep-alive in milliseconds (default 30 000). */
  keepAliveTimeoutMs?: number;
  /** Cert reload poll interval in milliseconds (default 1000). */
  certPollMs?: number;
  /**
   * HMAC-SHA256 key that signs and verifies the conversion stash, at least 32 bytes; or
   * PendingStashKey while the host is still loading it: a review that needs the key (to
   * write or verify a stash) then gets a Failure saying why, counted as
   * `aiops_conversion_failures_total{reason="stash_key_unavailable"}`, and every other
   * review converts (useStashKey hands the key over later). Default: random, for this
   * process only (a stash it signs is ignored after a restart and by any other replica), fit
   * for a single throwaway process only; a host with replicas passes the key it keeps.
   */
  stashKey?: Uint8Array | PendingStashKey;
  logger?: Logger;
  metrics?: WebhookMetrics;
}

export interface WebhookServer {
  /** The port actually bound. */
  readonly port: number;
  /** The webhook's metrics; the host serves their registry (none is served on this port). */
  readonly metrics: WebhookMetrics;
  /** The certificate (PEM, chain as in the file) served from the next handshake on. */
  servingCertificate(): Buffer;
  /** Bytes the requests being read or answered hold now, all addresses (each its Content-Length, or the body limit). */
  heldBytes(): number;
  /**
   * Serves `pair` from the next TLS handshake on, as a changed certificate file would.
   * Throws (and keeps the current one) when the pair is not a valid certificate and key.
   */
  useCertificate(pair: { readonly cert: Buffer; readonly key: Buffer }): void;
  /**
   * Calls `listener` each time a client ends the TLS handshake because it does not trust the
   * served certificate (`isCertificateRejection`): the caBundle it verifies with and the
   * certificate served disagree. Returns a function that removes the listener.
   */
  onCertificateRejected(listener: () => void): () => void;
  /**
   * Signs and verifies the conversion stash with `key` from the next review on; throws when
   * shorter than 32 bytes. Given PendingStashKey, no key from then on (reviews that need one
   * fail saying `pending`).
   */
  useStashKey(key: Uint8Array | PendingStashKey): void;
  /** Stops accepting, waits for in-flight requests (at most `graceMs`, default 10 000), then closes. */
  close(graceMs?: number): Promise<void>;
}

/** Starts the webhook; rejects if the certificate cannot be read or the port is taken. */
export async function startWebhookServer(opts: WebhookOptions = {}): Promise<WebhookServer> {
  const log = opts.logger ?? createLogger('conversion-webhook');
  const metrics = opts.metrics ?? createMetrics();
  const certPaths = opts.cert ?? certPathsIn(DEFAULT_CERT_DIR);
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let pair = readCertPair(certPaths);
  recordExpiry(metrics, pair.cert);
  let stashKey = checkedKey(opts.stashKey ?? randomBytes(MIN_KEY_BYTES));
  if (!(stashKey instanceof Uint8Array))
    log.warn('no conversion stash key yet; reviews that need it fail until it is loaded', {
      why: stashKey.pending,
    });
  if (opts.stashKey === undefined)
    log.warn('no conversion stash key given; signing with a key of this process only', {});
  const baseMs = opts.requestTimeoutMs ?? DEFAULT_BODY_TIMEOUT_BASE_MS;
  const minRate = opts.minBytesPerSecond ?? DEFAULT_MIN_BYTES_PER_SECOND;
  const headersTimeout = opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const maxInFlightBytes = opts.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES;
  const budget: ConnectionBudget = {
    handshakeTimeoutMs: headersTimeout,
    headersTimeoutMs: headersTimeout,
    // A backstop only: each request's own deadline (deadlineFor) is proportional to its size.
    requestTimeoutMs: headersTimeout + bodyDeadlineMs(maxBody, baseMs, minRate),
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? 30_000,
    idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
    maxConnectionsPerAddress: opts.maxConnectionsPerPeer ?? DEFAULT_MAX_CONNECTIONS_PER_PEER,
    maxConnections: opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
  };
  const server = https.createServer({ ...pair, ...listenerOptions(budget) });
  budgetConnections(server, budget, (why) => metrics.connectionsRefused.inc({ reason: why }));
  const peers = new PeerShares({
    maxBytesPerPeer: maxInFlightBytes,
    maxBytes: 2 * maxInFlightBytes,
  });
  const ctx: Ctx = {
    log,
    metrics,
    maxBody,
    key: () => stashKey,
    peers,
    deadlineFor: (bytes) => bodyDeadlineMs(bytes, baseMs, minRate),
    drains: new PeerShares(drainLimits(maxBody)),
    gate: new Slots(opts.maxConcurrentReviews ?? DEFAULT_MAX_CONCURRENT_REVIEWS, maxInFlightBytes, {
      count: metrics.inFlight,
      bytes: metrics.inFlightBytes,
    }),
    warnings: new LogOnce(),
    cpu: new CpuBudget({
      msPerSecond: opts.cpuMsPerSecond ?? DEFAULT_CPU_MS_PER_SECOND,
      burstMs: opts.cpuBurstMs ?? DEFAULT_CPU_BURST_MS,
      totalMsPerSecond: opts.cpuTotalMsPerSecond ?? DEFAULT_CPU_TOTAL_MS_PER_SECOND,
      totalBurstMs: opts.cpuTotalBurstMs ?? DEFAULT_CPU_TOTAL_BURST_MS,
      addresses: DEFAULT_CPU_ADDRESSES,
    }),
  };
  server.on('request', (req, res) => {
    try {
      route(req, res, ctx);
    } catch (err) {
      internalError(res, ctx, '', err);
    }
  });
  const rejectionListeners = new Set<() => void>();
  server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
    log.debug('TLS handshake failed', { err });
    if (!isCertificateRejection(err.code)) return;
    metrics.certificateRejections.inc();
    for (const listener of rejectionListeners) listener();
  });
  const stopWatching = watchCertPair(
    certPaths,
    (next) => {
      server.setSecureContext(next);
      pair = next;
      recordExpiry(metrics, next.cert);
      log.info('serving certificate reloaded', { certFile: certPaths.certFile });
    },
    (err) => log.warn('serving certificate changed but cannot be loaded; keeping the old one', { err }),
    opts.certPollMs ?? 1000,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 9443, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((err: unknown) => {
    stopWatching();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  log.info('conversion webhook listening', { port, certFile: certPaths.certFile });
  return {
    port,
    metrics,
    servingCertificate: () => pair.cert,
    heldBytes: () => peers.bytes,
    useCertificate: (next) => {
      server.setSecureContext({ cert: next.cert, key: next.key });
      pair = { cert: next.cert, key: next.key };
      recordExpiry(metrics, next.cert);
    },
    useStashKey: (key) => {
      stashKey = checkedKey(key);
    },
    onCertificateRejected: (listener) => {
      rejectionListeners.add(listener);
      return () => {
        rejectionListeners.delete(listener);
      };
    },
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        stopWatching();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

function checkedKey(key: Uint8Array | PendingStashKey): Uint8Array | PendingStashKey {
  if (key instanceof Uint8Array && key.length < MIN_KEY_BYTES)
    throw new Error(`the conversion stash key has ${key.length} bytes; at least ${MIN_KEY_BYTES} are needed`);
  return key;
}

/**
 * Sets aiops_conversion_certificate_expiration_timestamp_seconds from the (first) certificate
 * of `cert` (PEM), which the TLS context has already accepted; leaves it as it was when the
 * certificate cannot be parsed.
 */
function recordExpiry(metrics: WebhookMetrics, cert: Buffer | string): void {
  try {
    const notAfter = Date.parse(new X509Certificate(cert).validTo);
    if (Number.isFinite(notAfter)) metrics.certificateExpiry.set(notAfter / 1000);
  } catch {
    // Not parseable here while TLS took it: the gauge keeps the previous value.
  }
}
