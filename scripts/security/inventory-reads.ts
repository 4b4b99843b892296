// The input paths from the apiserver, in the inventory's order: the transport every read goes
// through, the kinds the operator watches or lists (with their page, object and cache budgets),
// then the other apiserver calls (its Lease, the metrics reviews, its Secrets and the CRD).

import {
  APISERVER_ONLY,
  ONE_AT_A_TIME,
  ONE_OBJECT,
  PAGE_BYTES,
  PAGE_TIME,
  RELIST_RATE,
  TRANSPORT_TIME,
  type InputPath,
} from './inventory-budgets.ts';

/** Every read from the apiserver: the transport, the watched and listed kinds, the other calls. */
export const READ_PATHS: readonly InputPath[] = [
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
    enforcedIn: ['lib/kube/transport.ts', 'lib/kube/bounded-read.ts', 'lib/kube/retry-after.ts'],
    provedBy: ['lib/kube/transport.test.ts', 'lib/kube/bounded-read.test.ts', 'lib/kube/retry-after.test.ts'],
  },
  {
    id: 'aitasks',
    class: 'watch/list',
    what: 'AITasks (v2) of every namespace: the task cache (list + watch)',
    sites: [
      "operator/assembly.ts: AITaskClient('v2')",
      'operator/assembly-caches.ts: Informer<v2.AITask>',
      'operator/runtime/informer.ts: this.#client.page',
      'operator/runtime/informer.ts: this.#client.watch',
    ],
    budgets: {
      bytes:
        'a page ≤ 16 MiB (10 objects of etcd’s 1.5 MiB); an object over 64 KiB once trimmed (metadata the operator reads, spec, status) is refused, logged and counted (aiops_cache_objects_refused_total)',
      count: '10 per page; the cache holds trimmed objects only, its bytes in aiops_cache_bytes',
      concurrency: 'one list or watch at a time',
      rate: RELIST_RATE,
      time: `${PAGE_TIME}; watch reopened when the apiserver ends it`,
      reach: 'tenants (create and patch AITasks and, often, their status, in their namespaces)',
    },
    enforcedIn: [
      'operator/runtime/trim.ts',
      'operator/runtime/informer.ts',
      'operator/runtime/cache-budget.ts',
    ],
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
      time: PAGE_TIME,
      reach: 'tenants (AITasks)',
    },
    enforcedIn: ['lib/kube/resources.ts', 'operator/mark-sweep.ts', 'api/upgrade/migrate.ts'],
    provedBy: ['operator/mark-sweep.test.ts', 'test/upgrade'],
  },
  {
    id: 'targets',
    class: 'watch/list',
    what: 'the target kinds of every namespace (Deployments, StatefulSets): one cache each (list + watch), and a target’s scale',
    sites: [
      'operator/assembly-caches.ts: ResourceClient(rules.resource)',
      'operator/assembly-caches.ts: Informer<Workload>',
      'operator/edges/actions.ts: this.#transport.request',
    ],
    budgets: {
      bytes:
        'pages of 10 Deployments (16 MiB of etcd’s largest objects) or 5 StatefulSets (8 MiB), each object trimmed to kind, identity, replicas, selector and ready counts before it is kept; a selector over 32 terms or 4 KiB is refused and said in the task’s status (TargetRefused)',
      count:
        'the caches hold at most 32 MiB of trimmed Deployments (4 MiB per namespace) and 8 MiB of trimmed StatefulSets (1 MiB per namespace); what does not fit is refused, counted (aiops_cache_objects_refused_total{reason="CacheFull"}) and said in the task’s status',
      concurrency: 'one list or watch at a time per kind; one scale read and write per action',
      rate: RELIST_RATE,
      time: PAGE_TIME,
      reach: 'tenants (create and patch Deployments and StatefulSets in their namespaces)',
    },
    enforcedIn: [
      'operator/runtime/target-kinds.ts',
      'operator/runtime/trim.ts',
      'operator/runtime/informer.ts',
      'operator/runtime/cache-budget.ts',
      'operator/observe.ts',
    ],
    provedBy: [
      'operator/runtime/trim.test.ts',
      'operator/runtime/page-budget.test.ts',
      'operator/runtime/cache-budget.test.ts',
      'operator/runtime/informer-budget.test.ts',
      'test/attacks/other-kinds.test.ts',
      'test/attacks/statefulsets.test.ts',
      'test/attacks/cache-bounds.test.ts',
    ],
  },
  {
    id: 'scale-targets',
    class: 'watch/list',
    what: 'targets of any other kind that serves /scale: discovery of the kind’s group-version, its /scale read, and the owners between its pods and it',
    sites: [
      'lib/kube/discovery.ts: this.#transport.request',
      'operator/scale-targets.ts: this.#transport.request',
      'operator/edges/owner-chain.ts: this.#transport.request',
    ],
    budgets: {
      bytes:
        'a discovery answer over 1 MiB, a /scale answer over 64 KiB or one owner over the largest object etcd stores is refused (TargetRefused, or the owner’s chain ends); a selector over 4 KiB is dropped and the pods are found by their owners alone; one that does not parse is never sent (TargetInvalid, no LIST)',
      count:
        '64 group-versions kept (least recently used evicted); one object per /scale read; at most 16 owners read and 3 owners followed per pod, per action (a tenant’s decoy pods can spend the 16 on its own target only)',
      concurrency: 'one discovery request per group-version at a time; one /scale read per reconcile',
      rate: 'discovery once per group-version per 5 minutes while at most 64 are named (a failure is not kept), past that at most one per reconcile, paced by each task’s interval; /scale once per reconcile (a 403 costs that one request, nothing more); owners only for an act or a settle',
      time: 'discovery and /scale 10 s each, each owner 10 s',
      reach:
        'tenants name any apiVersion and kind; the operator reads only kinds an admin granted (get on PLURAL/scale) and only in namespaces the task may target',
    },
    enforcedIn: [
      'lib/kube/discovery.ts',
      'operator/scale-targets.ts',
      'operator/edges/owner-chain.ts',
      'operator/edges/target-invalid.ts',
    ],
    provedBy: [
      'operator/scale-kinds.cluster.test.ts',
      'test/attacks/scale-kinds.test.ts',
      'test/attacks/tenant-errors.test.ts',
    ],
  },
  {
    id: 'target-pods',
    class: 'watch/list',
    what: 'a target’s Pods (and a Deployment’s ReplicaSets), listed by its selector to find the pods it owns',
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
      reach:
        'tenants (create Pods and ReplicaSets with any labels in their namespaces, write the selector a custom kind’s /scale shows): a selector that does not parse is never sent, and the apiserver’s 400/422 on a listing is the task’s TargetInvalid, never a reconcile error',
    },
    enforcedIn: ['operator/edges/actions.ts', 'operator/runtime/trim.ts', 'operator/edges/target-invalid.ts'],
    provedBy: [
      'operator/edges/pod-choice.test.ts',
      'operator/edges/target-invalid.test.ts',
      'test/attacks/tenant-errors.test.ts',
      'test/attacks/other-kinds.test.ts',
      'test/attacks/statefulsets.test.ts',
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
      time: `${PAGE_TIME}; uncordons none started after 30 s`,
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
      time: `${TRANSPORT_TIME}; best effort, [] on error`,
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
      time: TRANSPORT_TIME,
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
      concurrency: ONE_AT_A_TIME,
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
      concurrency: ONE_AT_A_TIME,
      rate: 'at start, and at each certificate rotation',
      time: TRANSPORT_TIME,
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
      concurrency: ONE_AT_A_TIME,
      rate: 'the caBundle check at most once per 10 s; the others at start and on rotation',
      time: TRANSPORT_TIME,
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
];
