// The input-path inventory's series half: every label of every series the operator and the
// webhook serve, with the closed set its values come from, and every shipped alert with what
// can move it. inventory.test.ts checks both against the registries and the PrometheusRule.

/** A label of one or more series: where its values come from and how many there can be. */
export interface LabelPath {
  readonly label: string;
  /** Series families carrying it. */
  readonly series: readonly string[];
  /** The closed set of its values, and who sets it. */
  readonly values: string;
  readonly enforcedIn: readonly string[];
  readonly provedBy: readonly string[];
}

/** An alert of the shipped PrometheusRule and what can move it. */
export interface AlertInput {
  readonly alert: string;
  /** The series it reads, and why only the operator's own state or failures move them. */
  readonly movedBy: string;
  readonly provedBy: readonly string[];
}

/** Every label of every series the operator and the webhook serve. */
export const LABELS: readonly LabelPath[] = [
  {
    label: 'controller',
    series: [
      'controller_runtime_active_workers',
      'controller_runtime_max_concurrent_reconciles',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_panics_total',
      'controller_runtime_reconcile_time_seconds',
      'controller_runtime_reconcile_total',
      'controller_runtime_terminal_reconcile_errors_total',
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
    ],
    values: '`aitask`, a constant',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts', 'test/attacks/series.test.ts'],
  },
  {
    label: 'name',
    series: [
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
      'leader_election_master_status',
    ],
    values: 'the queue’s constant name; the Lease name the admin sets (--leader-election-id)',
    enforcedIn: ['operator/runtime/metrics.ts'],
    provedBy: ['test/attacks/series.test.ts'],
  },
  {
    label: 'result',
    series: [
      'controller_runtime_reconcile_total',
      'aiops_conversion_ca_bundle_checks_total',
      'aiops_conversion_duration_seconds',
      'aiops_conversion_requests_total',
    ],
    values: 'fixed sets: success, error, requeue, requeue_after; Success, Failure; trusted, untrusted, error',
    enforcedIn: ['operator/runtime/metrics.ts', 'conversion-webhook/metrics.ts'],
    provedBy: ['test/attacks/series.test.ts'],
  },
  {
    label: 'code',
    series: ['rest_client_requests_total', 'aiops_conversion_requests_total'],
    values: 'HTTP status codes the apiserver answered (or `<error>`); the codes the webhook itself answers',
    enforcedIn: ['lib/kube/transport.ts', 'conversion-webhook/metrics.ts'],
    provedBy: ['test/attacks/series.test.ts'],
  },
  {
    label: 'method',
    series: ['rest_client_requests_total'],
    values: 'the HTTP methods the operator sends (GET, POST, PUT, PATCH, DELETE)',
    enforcedIn: ['lib/kube/transport.ts'],
    provedBy: ['operator/standard-metrics.cluster.test.ts'],
  },
  {
    label: 'host',
    series: ['rest_client_requests_total'],
    values: 'the apiserver’s host from the kubeconfig: one value',
    enforcedIn: ['lib/kube/transport.ts'],
    provedBy: ['operator/standard-metrics.cluster.test.ts'],
  },
  {
    label: 'action',
    series: ['aiops_actions_total'],
    values: 'the remediation enum of the CRD (RestartPod, ScaleUp, ScaleDown, CordonNode, Record)',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['test/attacks/series.test.ts'],
  },
  {
    label: 'outcome',
    series: ['aiops_actions_total', 'aiops_llm_calls_total'],
    values: 'fixed sets: executed, blocked, failed; the advisor’s call outcomes',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/telemetry.test.ts'],
  },
  {
    label: 'reason',
    series: [
      'aiops_cache_objects_refused_total',
      'aiops_guardrail_refusals_total',
      'aiops_conversion_failures_total',
      'aiops_conversion_connections_refused_total',
      'aiops_conversion_stash_rejected_total',
    ],
    values:
      'fixed reason enums of the decision core, the caches (TooLarge, NotAdmitted, CacheFull), the webhook (malformed apart from conversion; connections its budget closed, address, full or displaced, apart from reviews) and the stash, each created at 0',
    enforcedIn: [
      'operator/decision/vocabulary.ts',
      'operator/runtime/cache-budget.ts',
      'conversion-webhook/metrics.ts',
      'api/conversion/stash.ts',
    ],
    provedBy: ['test/attacks/series.test.ts', 'conversion-webhook/connection-refusals.test.ts'],
  },
  {
    label: 'resource',
    series: ['aiops_cache_bytes', 'aiops_cache_objects', 'aiops_cache_objects_refused_total'],
    values: 'the cached resources’ plural names, fixed by the operator',
    enforcedIn: ['operator/runtime/cache-metrics.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'model',
    series: ['aiops_llm_call_duration_seconds', 'aiops_llm_tokens_total'],
    values: 'the tenant’s `llm.model`: at most 20 names of at most 128 characters, the rest `_other`',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/telemetry.test.ts', 'test/attacks/series.test.ts'],
  },
  {
    label: 'kind',
    series: ['aiops_llm_tokens_total', 'nodejs_gc_duration_seconds'],
    values: 'prompt, completion; the GC kinds of V8',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/telemetry.test.ts'],
  },
  {
    label: 'desired',
    series: ['aiops_conversion_objects_total'],
    values: 'the versions the CRD serves; a review asking for another is refused before it is counted',
    enforcedIn: ['conversion-webhook/review.ts', 'conversion-webhook/metrics.ts'],
    provedBy: ['test/attacks/series.test.ts'],
  },
  {
    label: 'type',
    series: ['nodejs_active_handles', 'nodejs_active_requests', 'nodejs_active_resources'],
    values: 'Node’s handle and resource type names (prom-client’s default metrics)',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'space',
    series: [
      'nodejs_heap_space_size_available_bytes',
      'nodejs_heap_space_size_total_bytes',
      'nodejs_heap_space_size_used_bytes',
    ],
    values: 'V8’s heap space names',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'version',
    series: ['nodejs_version_info'],
    values: 'the running Node’s version (with `major`, `minor`, `patch`): one value',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'major',
    series: ['nodejs_version_info'],
    values: 'as `version`',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'minor',
    series: ['nodejs_version_info'],
    values: 'as `version`',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
  {
    label: 'patch',
    series: ['nodejs_version_info'],
    values: 'as `version`',
    enforcedIn: ['operator/telemetry.ts'],
    provedBy: ['operator/metrics-doc.test.ts'],
  },
];

/** What moves each shipped alert. */
export const ALERT_INPUTS: readonly AlertInput[] = [
  {
    alert: 'AIOpsOperatorDown',
    movedBy: 'Prometheus’ own `up` for the operator’s scrape target',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
  {
    alert: 'AIOpsOperatorNotLeading',
    movedBy: 'leader_election_master_status: the operator’s own leadership',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
  {
    alert: 'AIOpsReconcileErrors',
    movedBy:
      'reconcile errors a retry may fix (apiserver unreachable, 5xx, 429 past its retries); a conflict (409: the object changed since it was read, which whoever may write it, its status included, can cause) is retried as a requeue and not counted; an object’s own refusal stalls that task instead of counting here, and so does a tenant’s error: a target whose selector does not parse (the operator’s own check before the pods’ LIST, or the apiserver’s 400/422 on it) is that task’s TargetInvalid status, evaluated again at its interval',
    provedBy: [
      'deploy/monitoring/aiops-rules.test.yaml',
      'operator/runtime/controller.test.ts',
      'operator/edges/target-invalid.test.ts',
      'test/attacks/tenant-errors.test.ts',
    ],
  },
  {
    alert: 'AIOpsReconcilePanics',
    movedBy: 'exceptions in the operator’s own code while reconciling',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml', 'operator/runtime/controller.test.ts'],
  },
  {
    alert: 'AIOpsTasksStalled',
    movedBy:
      'aiops_tasks_stalled: tasks this operator itself judged Stalled; a Stalled condition someone writes into status counts for nothing',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml', 'test/attacks/alert-inputs.test.ts'],
  },
  {
    alert: 'AIOpsRemediationsRefused',
    movedBy:
      'guardrail refusals the operator decided (caps, cooldown, approval); a tenant’s breaching tasks can move it, which is what it reports (warning only)',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
  {
    alert: 'AIOpsLLMCircuitOpen',
    movedBy: 'circuit breakers the advisor opened on failed calls to allow-listed endpoints',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
  {
    alert: 'AIOpsConversionFailing',
    movedBy:
      'aiops_conversion_failures_total for conversions of well-formed reviews that failed, a missing stash key, timeouts and internal errors; a peer’s malformed or refused review is counted under other reasons',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml', 'test/attacks/series.test.ts'],
  },
  {
    alert: 'AIOpsConversionCertificateRejected',
    movedBy:
      'rejected handshakes only while the CRD’s caBundle does not verify the served certificate (checked at most once per 10 s)',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml', 'test/attacks/webhook-stranger-handshake.test.ts'],
  },
  {
    alert: 'AIOpsCertificateExpiresSoon',
    movedBy: 'the served certificate’s own notAfter',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
  {
    alert: 'AIOpsCertificateExpiresVerySoon',
    movedBy: 'the served certificate’s own notAfter',
    provedBy: ['deploy/monitoring/aiops-rules.test.yaml'],
  },
];
