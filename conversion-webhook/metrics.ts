// Prometheus metrics of the conversion webhook, on a registry of its own so a host
// process (the operator) can merge or expose it without name clashes. Every label value
// comes from a closed set fixed here (served versions, reasons, results, the HTTP codes the
// server answers): nothing a caller sends names a series.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { STASH_REJECTION_REASONS } from '../api/conversion/stash.ts';
import type { ConnectionRefusal } from '../lib/connection-budget.ts';
import { SERVED_API_VERSIONS } from './review.ts';

export interface WebhookMetrics {
  registry: Registry;
  requests: Counter<'code' | 'result'>;
  objects: Counter<'desired'>;
  failures: Counter<'reason'>;
  /** Connections the listener's connection budget closed, by CONNECTION_REFUSAL_REASONS (not reviews: aiops_conversion_failures_total counts those). */
  connectionsRefused: Counter<'reason'>;
  stashRejected: Counter<'reason'>;
  certificateRejections: Counter;
  duration: Histogram<'result'>;
  /** Time spent converting reviews (what cpu-budget.ts charges), in seconds. */
  conversionSeconds: Counter;
  /** ConversionReviews admitted and not yet answered (being read or converted). */
  inFlight: Gauge;
  /** Bytes those reviews were admitted with (their Content-Length, or the body limit without one). */
  inFlightBytes: Gauge;
  /** When the serving certificate presented now expires (its notAfter), in Unix seconds. */
  certificateExpiry: Gauge;
  /**
   * 1 while the caBundle of the CRD's conversion webhook does not verify the certificate
   * served, as last checked; 0 otherwise (and where nothing checks, as under `npm run webhook`).
   */
  caBundleMismatch: Gauge;
  /** Checks of the CRD's caBundle against the served certificate, by result (trusted, untrusted, error). */
  caBundleChecks: Counter<'result'>;
}

/** Results of a check of the CRD's caBundle against the served certificate. */
export const CA_BUNDLE_CHECK_RESULTS = ['trusted', 'untrusted', 'error'] as const;

/**
 * Every reason aiops_conversion_failures_total counts, each at 0 from the start so an alert's
 * rate() sees the first failure (the shipped PrometheusRule, scripts/monitoring/alerts.ts).
 */
export const CONVERSION_FAILURE_REASONS = [
  'malformed',
  'conversion',
  'stash_key_unavailable',
  'body_too_large',
  'overloaded',
  'timeout',
  'internal',
  'slow_client',
  'peer_share',
  'cpu_share',
  'cpu_total',
] as const;

/**
 * Every reason aiops_conversion_connections_refused_total counts (lib/connection-budget.ts's
 * ConnectionRefusal), each at 0 from the start: `address`, the remote address already held its
 * share; `full`, all connections were taken and no address held more than the new one's would;
 * `displaced`, an open connection of the address holding the most, closed to make room.
 */
export const CONNECTION_REFUSAL_REASONS: readonly ConnectionRefusal[] = ['address', 'full', 'displaced'];

/** Creates the webhook's metrics; process metrics are included when `processMetrics` (default true). */
export function createMetrics(processMetrics = true): WebhookMetrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'aiops_conversion_requests_total',
      help: 'ConversionReview requests by HTTP code and result (Success, Failure).',
      labelNames: ['code', 'result'],
      registers: [registry],
    }),
    objects: objects(registry),
    failures: failures(registry),
    connectionsRefused: connectionsRefused(registry),
    stashRejected: stashRejected(registry),
    certificateRejections: new Counter({
      name: 'aiops_conversion_certificate_rejections_total',
      help: "TLS handshakes a client ended because it does not trust the served certificate: the apiserver's when the CRD's caBundle and the certificate disagree, or anyone's whose client lacks the CA (anyone who reaches the port can add to it; the alert reads aiops_conversion_ca_bundle_mismatch beside it).",
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'aiops_conversion_duration_seconds',
      help: 'Time to answer a ConversionReview, in seconds.',
      labelNames: ['result'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    conversionSeconds: new Counter({
      name: 'aiops_conversion_cpu_seconds_total',
      help: 'Time spent converting ConversionReviews, all callers together, in seconds: what the conversion time budget (per address and in all) charges.',
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'aiops_conversion_in_flight_requests',
      help: 'ConversionReviews admitted and not yet answered; never above the concurrency cap.',
      registers: [registry],
    }),
    inFlightBytes: new Gauge({
      name: 'aiops_conversion_in_flight_bytes',
      help: 'Declared body bytes of the ConversionReviews in flight; never above the in-flight byte budget.',
      registers: [registry],
    }),
    certificateExpiry: new Gauge({
      name: 'aiops_conversion_certificate_expiration_timestamp_seconds',
      help: 'When the serving certificate the webhook presents now expires (its notAfter), in Unix seconds; follows each reload.',
      registers: [registry],
    }),
    caBundleMismatch: new Gauge({
      name: 'aiops_conversion_ca_bundle_mismatch',
      help: "1 while the caBundle of the CRD's conversion webhook does not verify the certificate this webhook serves (so the apiserver's conversions fail), as last checked after a certificate rejection; 0 otherwise.",
      registers: [registry],
    }),
    caBundleChecks: caBundleChecks(registry),
  };
}

/** Objects converted by desired apiVersion, every served version at 0 from the start. */
function objects(registry: Registry): Counter<'desired'> {
  const c = new Counter({
    name: 'aiops_conversion_objects_total',
    help: 'Objects converted, by desired apiVersion (a served version; a review asking for any other is refused).',
    labelNames: ['desired'],
    registers: [registry],
  });
  for (const desired of SERVED_API_VERSIONS) c.inc({ desired }, 0);
  return c;
}

/** Checks of the CRD's caBundle, every result at 0 from the start. */
function caBundleChecks(registry: Registry): Counter<'result'> {
  const c = new Counter({
    name: 'aiops_conversion_ca_bundle_checks_total',
    help: "Checks of the CRD's conversion caBundle against the served certificate, made after certificate rejections (at most one per pause), by result (trusted, untrusted, error: the CRD could not be read).",
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of CA_BUNDLE_CHECK_RESULTS) c.inc({ result }, 0);
  return c;
}

/** Failed requests by reason, every reason of CONVERSION_FAILURE_REASONS at 0 from the start. */
function failures(registry: Registry): Counter<'reason'> {
  const c = new Counter({
    name: 'aiops_conversion_failures_total',
    help: 'Failed requests by reason (malformed: not what the apiserver sends (not a ConversionReview, a version not served, an object that is not a valid AITask at its own version), which anyone who reaches the port can send; conversion: a valid object the webhook could not convert; stash_key_unavailable: the review needed the conversion stash key before it was loaded, body_too_large, overloaded: over the concurrency cap or the bytes in flight over all addresses, answered 429 with Retry-After; timeout, internal: an exception while answering; slow_client: headers, body or answer slower than their deadline, 408 or closed; peer_share: one remote address over its share of bytes in flight, answered 429 with Retry-After; cpu_share: one remote address in debt of conversion time, 429 with Retry-After; cpu_total: all addresses together in debt of conversion time, 429 with Retry-After). Connections the connection budget closes are counted apart, in aiops_conversion_connections_refused_total.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of CONVERSION_FAILURE_REASONS) c.inc({ reason }, 0);
  return c;
}

/** Connections the connection budget closed, every reason of CONNECTION_REFUSAL_REASONS at 0 from the start. */
function connectionsRefused(registry: Registry): Counter<'reason'> {
  const c = new Counter({
    name: 'aiops_conversion_connections_refused_total',
    help: "Connections to the webhook its connection budget closed, by reason (address: refused on arrival, the remote address already held its share; full: refused on arrival, every connection was taken by addresses holding no more than the new one's would; displaced: an open connection of the address holding the most, closed to make room for a smaller holder). Anyone who reaches the port moves it; no alert reads it.",
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of CONNECTION_REFUSAL_REASONS) c.inc({ reason }, 0);
  return c;
}

/** The conversion stashes (or entries) ignored, every reason at 0 from the start. */
function stashRejected(registry: Registry): Counter<'reason'> {
  const c = new Counter({
    name: 'aiops_conversion_stash_rejected_total',
    help: 'Conversion stashes or stash entries ignored, by reason (unsigned, forged, foreign_uid, malformed, too_large, unsafe_path, out_of_bounds); the object is converted without them.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of STASH_REJECTION_REASONS) c.inc({ reason }, 0);
  return c;
}
