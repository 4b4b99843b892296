// The input paths that listen: the conversion webhook, the standalone webhook's /metrics, the
// operator's /metrics and its probes, each with its connection caps and deadlines.

import {
  CONNECTION_BUDGET_CODE,
  CONNECTION_BUDGET_TEST,
  connectionDeadlines,
  connectionShares,
  METRICS_GET_ONLY,
  type InputPath,
} from './inventory-budgets.ts';

/** Every listener of the operator and the standalone webhook. */
export const LISTENER_PATHS: readonly InputPath[] = [
  {
    id: 'webhook-port',
    class: 'listener',
    what: 'the conversion webhook, HTTPS :9443 (hosted by the operator, or standalone)',
    sites: ['conversion-webhook/server.ts: https.createServer'],
    budgets: {
      bytes:
        'a body over 8 MiB gets 413; 10 MiB of declared bodies per address, 20 MiB over all; a refused body is read and dropped before its answer (up to 16 MiB) within 16 MiB per address and 64 MiB in all, beyond which it is answered at once; an object with more values than a valid one of its version holds (v1alpha1 10, v1 238, v2 5,314 in spec and status; 65,536 in metadata; 32 deep) is refused before it is walked, at most 64 violations listed',
      count:
        '64 connections per remote address, 256 in all (a smaller holder displaces the biggest); counted from the TCP connection, before TLS',
      concurrency: '8 reviews converted at once, a slot taken only once the whole body is read',
      rate: 'conversion time per address and in all: 250 ms per second per address (burst 2.5 s; 1,024 addresses, then one shared bucket) and 500 ms per second in all (burst 5 s), each address earning at most its part of the total (split between the addresses that asked in the last 10 s and one more); a review waits until the total holds what its size takes (150 ms per MiB); the address or all of them in debt, or beyond its byte share, 429 with Retry-After',
      time: 'TLS handshake and headers 5 s; body and answer 5 s + 1 s per MiB; 30 s idle; then 408 or closed',
      reach:
        'any pod (the apiserver’s address is not selectable); the shipped NetworkPolicy admits only the webhook port',
    },
    enforcedIn: [
      'conversion-webhook/capacity.ts',
      'conversion-webhook/requests.ts',
      'conversion-webhook/refusals.ts',
      'conversion-webhook/cpu-budget.ts',
      'api/conversion/convert.ts',
      'api/conversion/bounds.ts',
      CONNECTION_BUDGET_CODE,
    ],
    provedBy: [
      'conversion-webhook/admission.test.ts',
      'conversion-webhook/capacity.test.ts',
      'conversion-webhook/cpu-budget.test.ts',
      'conversion-webhook/refusal-drain.test.ts',
      'api/conversion/bounded-work.test.ts',
      'test/attacks/conversion-work.test.ts',
      'test/attacks/webhook-flood.test.ts',
      'test/attacks/webhook-slow-headers.test.ts',
    ],
  },
  {
    id: 'webhook-metrics-port',
    class: 'listener',
    what: 'a standalone webhook’s /metrics (`npm run webhook -- --metrics-port`), plain HTTP',
    sites: ['conversion-webhook/metrics-server.ts: http.createServer'],
    budgets: {
      bytes: METRICS_GET_ONLY,
      count: connectionShares(false),
      concurrency: 'one scrape rendered at a time per connection',
      rate: 'bounded by the connection shares; only local processes reach it',
      time: connectionDeadlines(false),
      reach: 'loopback only (127.0.0.1 by default); not part of any install',
    },
    enforcedIn: ['conversion-webhook/metrics-server.ts', CONNECTION_BUDGET_CODE],
    provedBy: [CONNECTION_BUDGET_TEST, 'conversion-webhook/server.test.ts'],
  },
  {
    id: 'metrics-port',
    class: 'listener',
    what: 'the operator’s /metrics, HTTPS :8443 behind TokenReview and SubjectAccessReview',
    sites: ['operator/runtime/server.ts: https.createServer'],
    budgets: {
      bytes: METRICS_GET_ONLY,
      count: connectionShares(true),
      concurrency: 'reviews as in metrics-reviews',
      rate: 'reviews as in metrics-reviews; connections beyond a share closed on arrival',
      time: connectionDeadlines(true),
      reach:
        'any pod that reaches it; the shipped NetworkPolicy admits only namespaces labelled `metrics: enabled`',
    },
    enforcedIn: ['operator/runtime/server.ts', 'operator/runtime/metrics-auth.ts', CONNECTION_BUDGET_CODE],
    provedBy: [
      CONNECTION_BUDGET_TEST,
      'test/attacks/listener-connections.test.ts',
      'test/attacks/metrics.test.ts',
      'operator/metrics-access.cluster.test.ts',
    ],
  },
  {
    id: 'probe-port',
    class: 'listener',
    what: 'the operator’s /healthz and /readyz, HTTP :8081',
    sites: ['operator/runtime/server.ts: http.createServer'],
    budgets: {
      bytes: 'no body is read',
      count: connectionShares(false),
      concurrency: 'each answer is computed from memory',
      rate: 'bounded by the connection shares',
      time: connectionDeadlines(false),
      reach:
        'the kubelet (node addresses, which NetworkPolicies do not restrict on common CNIs); other pods are denied by the shipped NetworkPolicy',
    },
    enforcedIn: ['operator/runtime/server.ts', CONNECTION_BUDGET_CODE],
    provedBy: [CONNECTION_BUDGET_TEST, 'test/attacks/listener-connections.test.ts'],
  },
];
