// The inventory of every input path of the operator process (with its hosted conversion
// webhook) and of the standalone webhook: each watched or listed kind, each other apiserver
// read, each listener, each outbound call, each metric label and each alert's input, with its
// budgets (labels and alerts in inventory-series.ts). Whatever reaches the process through one of these is treated as hostile: each path
// states how many bytes, how many objects or connections, how much at once, how often, for how
// long, and who may reach it. `npm run generate` renders it into docs/security.md;
// inventory.test.ts checks it against the code (scan.ts finds every site, the registries give
// every label, alerts.ts every alert), so a new path without its budgets fails CI.

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

const APISERVER_ONLY =
  'the apiserver of the kubeconfig or in-cluster config only (no redirect is followed); what it returns was written by whoever RBAC lets write that kind';
const PAGE_BYTES =
  'a page of 10 (16 MiB of objects as large as etcd stores, 1.5 MiB), its answer refused past 10 × 1.5 MiB + 64 KiB and then read again one object at a time (≤ 9.1 MiB); each page dropped before the next';
const ONE_OBJECT = 'one object, its answer within the transport’s 32 MiB';

/** Every input path. Order: reads from the apiserver, listeners, outbound calls. */
export const INPUT_PATHS: readonly InputPath[] = [
  {
    id: 'apiserver-transport',
    class: 'apiserver call',
    what: 'every request to the apiserver (list, get, watch, write) goes through one transport',
    sites: [
      'lib/kube/transport.ts: http.request',
      'lib/kube/transport.ts: https.request',
      'lib/kube/resources.ts: this.list',
      'lib/kube/resources.ts: this.page',
      'lib/kube/resources.ts: this.transport.request',
      'lib/kube/resources.ts: this.transport.stream',
    ],
    budgets: {
      bytes:
        'an answer over 32 MiB (or the caller’s cap) and a watch line over 10 MiB are refused as that request’s ResponseTooLargeError, with only its first 4 KiB kept',
      count: 'keep-alive sockets reused; idle ones closed after 30 s',
      concurrency: 'one per caller; the callers below bound theirs',
      rate: '429/5xx with Retry-After retried at most 10 times, waiting what the apiserver names',
      time: '30 s per request unless the caller sets less; watches end with the apiserver’s timeoutSeconds',
      reach: APISERVER_ONLY,
    },
    enforcedIn: ['lib/kube/transport.ts', 'lib/kube/retry-after.ts'],
    provedBy: ['lib/kube/transport.test.ts', 'lib/kube/retry-after.test.ts'],
  },
  {
    id: 'aitasks',
    class: 'watch/list',
    what: 'AITasks (v2) of every namespace: the task cache (list + watch)',
    sites: [
      "operator/assembly.ts: AITaskClient('v2')",
      'operator/assembly.ts: Informer<v2.AITask>',
      'operator/runtime/informer.ts: this.#client.page',
      'operator/runtime/informer.ts: this.#client.watch',
    ],
    budgets: {
      bytes:
        'a page ≤ 16 MiB (10 objects of etcd’s 1.5 MiB); an object over 64 KiB once trimmed (metadata the operator reads, spec, status) is refused, logged and counted (aiops_cache_objects_refused_total)',
      count: '10 per page; the cache holds trimmed objects only, its bytes in aiops_cache_bytes',
      concurrency: 'one list or watch at a time',
      rate: 'relist only on 410 Gone; reconnects back off 0.8 s → 30 s, jittered',
      time: 'each page within the transport’s 30 s; watch reopened when the apiserver ends it',
      reach: 'tenants (create and patch AITasks and, often, their status, in their namespaces)',
    },
    enforcedIn: ['operator/runtime/trim.ts', 'operator/runtime/informer.ts'],
    provedBy: [
      'operator/runtime/page-budget.test.ts',
      'test/attacks/big-status.test.ts',
      'test/attacks/cache-bounds.test.ts',
    ],
  },
  {
    id: 'aitask-sweeps',
    class: 'watch/list',
    what: 'AITasks listed page by page: the leader’s cordon-mark sweep and storage migration',
    sites: [
      'operator/mark-sweep.ts: d.tasks.forEachPage',
      'api/upgrade/migrate.ts: ResourceClient(aitaskResource)',
      'api/upgrade/migrate.ts: tasks.page',
    ],
    budgets: {
      bytes: PAGE_BYTES,
      count: 'nothing kept beyond the UIDs (the sweep) or the page (migration)',
      concurrency: 'one page at a time',
      rate: 'the sweep once per --cordon-mark-sweep-interval and after a deletion; migration once per start or command',
      time: 'each page within the transport’s 30 s',
      reach: 'tenants (AITasks)',
    },
    enforcedIn: ['lib/kube/resources.ts', 'operator/mark-sweep.ts', 'api/upgrade/migrate.ts'],
    provedBy: ['operator/mark-sweep.test.ts', 'test/upgrade'],
  },
  {
    id: 'deployments',
    class: 'watch/list',
    what: 'Deployments of every namespace: the target cache (list + watch), and a target’s scale',
    sites: [
      'operator/assembly.ts: ResourceClient(Resources.deployments)',
      'operator/assembly.ts: Informer<Deployment>',
      'operator/edges/actions.ts: ResourceClient(Resources.deployments)',
      'operator/edges/actions.ts: this.#deployments.transport.request',
      'operator/edges/actions.ts: this.#transport.request',
    ],
    budgets: {
      bytes:
        'pages of 10 (16 MiB of etcd’s largest objects), each object trimmed to identity, replicas, selector and ready counts before it is kept; a selector over 32 terms or 4 KiB is refused and said in the task’s status (TargetRefused)',
      count:
        'the cache holds at most 32 MiB of trimmed Deployments, 4 MiB per namespace; what does not fit is refused, counted (aiops_cache_objects_refused_total{reason="CacheFull"}) and said in the task’s status',
      concurrency: 'one list or watch at a time; one scale read and write per action',
      rate: 'relist only on 410 Gone; reconnects back off 0.8 s → 30 s, jittered',
      time: 'each page within the transport’s 30 s',
      reach: 'tenants (create and patch Deployments in their namespaces)',
    },
    enforcedIn: ['operator/runtime/trim.ts', 'operator/runtime/informer.ts', 'operator/observe.ts'],
    provedBy: [
      'operator/runtime/trim.test.ts',
      'operator/runtime/informer-budget.test.ts',
      'test/attacks/other-kinds.test.ts',
      'test/attacks/cache-bounds.test.ts',
    ],
  },
  {
    id: 'target-pods',
    class: 'watch/list',
    what: 'a target’s Pods and ReplicaSets, listed by its selector to find the pods it owns',
    sites: [
      'operator/edges/actions.ts: ResourceClient(Resources.pods)',
      'operator/edges/actions.ts: ResourceClient(replicaSets)',
      'operator/edges/actions.ts: this.#pods.forEachPage',
      'operator/edges/actions.ts: this.#replicaSets.forEachPage',
    ],
    budgets: {
      bytes: `${PAGE_BYTES}; each pod trimmed to its owners, node, phase, conditions and restarts before the next page`,
      count:
        'at most 1,000 owned pods and ReplicaSets considered; a bare pod with the target’s labels is read and dropped',
      concurrency: 'one listing per reconcile that acts or settles',
      rate: 'only for an act or a settle: at most once per task interval',
      time: 'within the reconcile’s deadline',
      reach: 'tenants (create Pods and ReplicaSets with any labels in their namespaces)',
    },
    enforcedIn: ['operator/edges/actions.ts', 'operator/runtime/trim.ts'],
    provedBy: [
      'operator/edges/pod-choice.test.ts',
      'test/attacks/other-kinds.test.ts',
      'test/attacks/cordon.test.ts',
    ],
  },
  {
    id: 'nodes',
    class: 'watch/list',
    what: 'Nodes, listed for CordonNode’s cap and the finalizer’s uncordons',
    sites: [
      'operator/edges/actions.ts: ResourceClient(Resources.nodes)',
      'operator/edges/actions.ts: nodes.page',
      'operator/edges/node-snapshots.ts: this.#o.page',
    ],
    budgets: {
      bytes: PAGE_BYTES,
      count: 'only name, unschedulable and the operator’s mark are kept',
      concurrency: 'one node list at a time, shared by all tasks',
      rate: 'at most one list per 10 s shared by all tasks (plus one per actual cordon)',
      time: 'each page within the transport’s 30 s; uncordons none started after 30 s',
      reach: 'cluster admins and kubelets (tenants cannot write Nodes)',
    },
    enforcedIn: ['operator/edges/node-snapshots.ts', 'operator/finalize.ts'],
    provedBy: ['operator/edges/node-snapshots.test.ts', 'test/attacks/fanout-cordon-lists.test.ts'],
  },
  {
    id: 'events',
    class: 'watch/list',
    what: 'Events of a task’s namespace, read for the LLM advisor’s context',
    sites: [
      'operator/edges/events.ts: ResourceClient(Resources.events)',
      'operator/edges/events.ts: this.#events.forEachPage',
    ],
    budgets: {
      bytes: PAGE_BYTES,
      count: 'at most 100 Events read; only the target’s reasons kept',
      concurrency: 'one per LLM call',
      rate: 'one per LLM call (itself capped per namespace per hour)',
      time: 'within the transport’s 30 s; best effort, [] on error',
      reach: 'whoever may create Events in the namespace (controllers, tenants with that right)',
    },
    enforcedIn: ['operator/edges/events.ts'],
    provedBy: ['operator/edges/events.test.ts'],
  },
  {
    id: 'controller-revisions',
    class: 'watch/list',
    what: 'ControllerRevisions the operator writes as each task’s spec history',
    sites: [
      'operator/edges/history.ts: ResourceClient(Resources.controllerRevisions)',
      'operator/edges/history.ts: this.#revisions.listAll',
    ],
    budgets: {
      bytes: PAGE_BYTES,
      count: '10 revisions kept per task; listed only once a generation exceeds that',
      concurrency: 'one per new generation',
      rate: 'once per new generation of a task',
      time: 'within the transport’s 30 s',
      reach: 'tenants with ControllerRevision rights in their namespace',
    },
    enforcedIn: ['operator/edges/history.ts'],
    provedBy: ['api/revisions.test.ts'],
  },
  {
    id: 'leases',
    class: 'apiserver call',
    what: 'the operator’s leader Lease',
    sites: [
      'operator/assembly.ts: ResourceClient(Resources.leases)',
      'operator/runtime/leader.ts: leases.transport.request',
    ],
    budgets: {
      bytes: ONE_OBJECT,
      count: 'one object, by name',
      concurrency: 'one request at a time',
      rate: 'once per --retry-period',
      time: 'each request within --renew-deadline',
      reach: 'the operator’s namespace: admins and the operator (RBAC by resourceNames)',
    },
    enforcedIn: ['operator/runtime/leader.ts'],
    provedBy: ['operator/runtime/leader.cluster.test.ts', 'operator/runtime/leader-renew.cluster.test.ts'],
  },
  {
    id: 'metrics-reviews',
    class: 'apiserver call',
    what: 'TokenReviews and SubjectAccessReviews for each bearer token presented to /metrics',
    sites: ['operator/runtime/metrics-auth.ts: this.#transport.request'],
    budgets: {
      bytes: ONE_OBJECT,
      count: 'results cached by the token’s SHA-256: 256–1,024 entries, successes apart from failures',
      concurrency: '8 reviews in flight; allowed tokens renewed in a lane of their own (4)',
      rate: '4/s per remote address, burst 8; 4,096 addresses, then one shared bucket',
      time: '10 s per review',
      reach: 'anyone who reaches the metrics port (see the listener)',
    },
    enforcedIn: ['operator/runtime/metrics-auth.ts', 'lib/token-bucket.ts'],
    provedBy: ['test/attacks/token-flood.test.ts', 'lib/token-bucket.test.ts'],
  },
  {
    id: 'secrets',
    class: 'apiserver call',
    what: 'the webhook’s serving certificate Secret and the conversion stash key',
    sites: [
      'conversion-webhook/hosted/conversion-key.ts: ResourceClient(SECRETS)',
      'conversion-webhook/hosted/webhook-cert-secret.ts: ResourceClient(SECRETS)',
      'conversion-webhook/cert-rotation.ts: ResourceClient(secretType)',
    ],
    budgets: {
      bytes: ONE_OBJECT,
      count: 'two objects, by name',
      concurrency: 'one request at a time',
      rate: 'at start, and at each certificate rotation',
      time: 'within the transport’s 30 s',
      reach: 'the operator’s namespace: admins and the operator',
    },
    enforcedIn: [
      'conversion-webhook/hosted/conversion-key.ts',
      'conversion-webhook/hosted/webhook-cert-secret.ts',
      'conversion-webhook/cert-rotation.ts',
    ],
    provedBy: [
      'conversion-webhook/hosted/conversion-key.cluster.test.ts',
      'conversion-webhook/hosted/webhook-cert-secret.cluster.test.ts',
    ],
  },
  {
    id: 'crd',
    class: 'apiserver call',
    what: 'the AITask CRD (caBundle, storedVersions) and the OLM OperatorCondition',
    sites: [
      'conversion-webhook/hosted/conversion-ca-bundle.ts: ResourceClient(CRD_RESOURCE)',
      'conversion-webhook/hosted/conversion-ca-check.ts: ResourceClient(CRD_RESOURCE)',
      'operator/olm/operator-condition-writer.ts: ResourceClient(CRD_RESOURCE)',
      'operator/olm/operator-condition-writer.ts: ResourceClient(OPERATOR_CONDITION)',
      'conversion-webhook/cert-rotation.ts: ResourceClient(CRD_RESOURCE)',
      'api/upgrade/migrate.ts: ResourceClient(CRD_RESOURCE)',
    ],
    budgets: {
      bytes: ONE_OBJECT,
      count: 'one object each, by name',
      concurrency: 'one request at a time',
      rate: 'the caBundle check at most once per 10 s; the others at start and on rotation',
      time: 'within the transport’s 30 s',
      reach: 'cluster admins and OLM (cluster-scoped kinds)',
    },
    enforcedIn: [
      'conversion-webhook/hosted/conversion-ca-check.ts',
      'operator/olm/operator-condition-writer.ts',
    ],
    provedBy: [
      'conversion-webhook/hosted/conversion-ca-bundle.cluster.test.ts',
      'test/attacks/webhook-stranger-handshake.test.ts',
    ],
  },
  {
    id: 'webhook-port',
    class: 'listener',
    what: 'the conversion webhook, HTTPS :9443 (hosted by the operator, or standalone)',
    sites: ['conversion-webhook/server.ts: https.createServer'],
    budgets: {
      bytes:
        'a body over 8 MiB gets 413; 10 MiB of declared bodies per address, 20 MiB over all; an object with more values than a valid one of its version holds (v1alpha1 10, v1 238, v2 5,314 in spec and status; 65,536 in metadata; 32 deep) is refused before it is walked, at most 64 violations listed',
      count:
        '64 connections per remote address, 256 in all (a smaller holder displaces the biggest); counted from the TCP connection, before TLS',
      concurrency: '8 reviews converted at once, a slot taken only once the whole body is read',
      rate: 'conversion time 250 ms per second per address (burst 2.5 s; 1,024 addresses, then one shared bucket); in debt, or beyond its byte share, 429 with Retry-After',
      time: 'TLS handshake and headers 5 s; body and answer 5 s + 1 s per MiB; 30 s idle; then 408 or closed',
      reach:
        'any pod (the apiserver’s address is not selectable); the shipped NetworkPolicy admits only the webhook port',
    },
    enforcedIn: [
      'conversion-webhook/capacity.ts',
      'conversion-webhook/requests.ts',
      'conversion-webhook/cpu-budget.ts',
      'api/conversion/convert.ts',
      'api/conversion/bounds.ts',
      'lib/connection-budget.ts',
    ],
    provedBy: [
      'conversion-webhook/admission.test.ts',
      'conversion-webhook/capacity.test.ts',
      'conversion-webhook/cpu-budget.test.ts',
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
      bytes: 'no body is read; GET /metrics only',
      count:
        '16 connections per remote address, 128 in all (a smaller holder displaces the biggest), counted from the TCP connection',
      concurrency: 'one scrape rendered at a time per connection',
      rate: 'bounded by the connection shares; only local processes reach it',
      time: 'headers 5 s from the first byte, the whole request 10 s, keep-alive 5 s, 30 s without a byte either way',
      reach: 'loopback only (127.0.0.1 by default); not part of any install',
    },
    enforcedIn: ['conversion-webhook/metrics-server.ts', 'lib/connection-budget.ts'],
    provedBy: ['lib/connection-budget.test.ts', 'conversion-webhook/server.test.ts'],
  },
  {
    id: 'metrics-port',
    class: 'listener',
    what: 'the operator’s /metrics, HTTPS :8443 behind TokenReview and SubjectAccessReview',
    sites: ['operator/runtime/server.ts: https.createServer'],
    budgets: {
      bytes: 'no body is read; GET /metrics only',
      count:
        '16 connections per remote address, 128 in all (a smaller holder displaces the biggest), counted from the TCP connection, before TLS',
      concurrency: 'reviews as in metrics-reviews',
      rate: 'reviews as in metrics-reviews; connections beyond a share closed on arrival',
      time: 'TLS handshake 5 s from the connection (bytes trickling in do not extend it); headers 5 s from the first byte, the whole request 10 s, keep-alive 5 s, 30 s without a byte either way',
      reach:
        'any pod that reaches it; the shipped NetworkPolicy admits only namespaces labelled `metrics: enabled`',
    },
    enforcedIn: [
      'operator/runtime/server.ts',
      'operator/runtime/metrics-auth.ts',
      'lib/connection-budget.ts',
    ],
    provedBy: [
      'lib/connection-budget.test.ts',
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
      count:
        '16 connections per remote address, 128 in all (a smaller holder displaces the biggest), counted from the TCP connection',
      concurrency: 'each answer is computed from memory',
      rate: 'bounded by the connection shares',
      time: 'headers 5 s from the first byte, the whole request 10 s, keep-alive 5 s, 30 s without a byte either way',
      reach:
        'the kubelet (node addresses, which NetworkPolicies do not restrict on common CNIs); other pods are denied by the shipped NetworkPolicy',
    },
    enforcedIn: ['operator/runtime/server.ts', 'lib/connection-budget.ts'],
    provedBy: ['lib/connection-budget.test.ts', 'test/attacks/listener-connections.test.ts'],
  },
  {
    id: 'prometheus',
    class: 'outbound',
    what: 'instant queries for each task’s metric',
    sites: ['operator/edges/prometheus.ts: http.get', 'operator/edges/prometheus.ts: https.get'],
    budgets: {
      bytes: 'an answer over 1 MiB fails that evaluation (MetricsUnavailable)',
      count: 'series per answer bounded by the query’s confinement to the target’s namespace',
      concurrency: 'one query per reconcile worker',
      rate: 'one per task interval; windows ≤ --max-query-range, steps ≥ --min-query-resolution',
      time: 'Prometheus’ own timeout 5 s; the client gives up at 5.5 s, the worker at 6 s',
      reach: 'the admin’s --prometheus-url only; the tenant writes the query, confined and costed',
    },
    enforcedIn: [
      'operator/edges/prometheus.ts',
      'operator/decision/confine.ts',
      'operator/decision/query-cost.ts',
    ],
    provedBy: [
      'operator/edges/prometheus.test.ts',
      'test/attacks/promql-cost.test.ts',
      'test/attacks/reads.test.ts',
    ],
  },
  {
    id: 'llm',
    class: 'outbound',
    what: 'chat completions to an allow-listed LLM endpoint, in LLM mode',
    sites: ['operator/llm/advisor.ts: fetch'],
    budgets: {
      bytes: 'an answer over 1 MiB fails the call; completion tokens capped per request',
      count: 'one answer per call, parsed strictly',
      concurrency: 'one call per reconcile worker',
      rate: '--llm-namespace-calls-per-hour per namespace; a circuit breaker per endpoint, model and namespace',
      time: 'the task’s timeoutSeconds capped by --llm-max-timeout; the worker stops waiting 1 s later',
      reach: 'endpoints the admin allow-lists (scheme, host, port and path prefix)',
    },
    enforcedIn: ['operator/llm/advisor.ts', 'operator/llm/policy.ts'],
    provedBy: [
      'test/attacks/llm-budget.test.ts',
      'test/attacks/shares.test.ts',
      'operator/llm/policy.test.ts',
    ],
  },
];
