// The alerts an on-call engineer needs for the operator, as one Prometheus rule group: the
// PrometheusRule (objects.ts), deploy/monitoring/aiops-rules.yaml (what promtool checks and
// unit-tests) and docs/operator.md's Monitoring section are all made from ALERTS below, so
// they cannot drift. Each alert names the vector it compares, which the real-Prometheus test
// (test/monitoring/scrape.cluster.test.ts) runs against a scraped operator: a typo in a metric or
// label name there returns nothing and fails the test instead of never firing in production.

/** One alert: its rule, and what docs/operator.md tells the on-call engineer about it. */
export interface AlertDef {
  readonly alert: string;
  /** The vector the expression compares (no threshold): returns series on a healthy, scraped operator. */
  readonly vector: string;
  /** The rule's expression, built from `vector`. */
  readonly expr: string;
  /** How long the expression must hold before the alert fires (Prometheus duration); none: at once. */
  readonly for?: string;
  readonly severity: 'critical' | 'warning';
  /** One line, for the alert's `summary` annotation. */
  readonly summary: string;
  /** What it means, with Prometheus templating of the labels, for the `description` annotation. */
  readonly description: string;
  /** What to do, for docs/operator.md (plain Markdown). */
  readonly action: string;
}

/** The rule group's name in the PrometheusRule and the rule file. */
export const RULE_GROUP = 'aiops-operator';

/**
 * The alerts for the operator scraped as job `job` (prometheus-operator names the job after
 * the metrics Service; objects.ts METRICS_SERVICE) on endpoint `https`, its /metrics carrying
 * the hosted conversion webhook's series too.
 */
export function alertDefs(job: string): AlertDef[] {
  const sel = (extra = ''): string => `{job="${job}"${extra}}`;
  const def = (d: Omit<AlertDef, 'expr'>, expr: (v: string) => string): AlertDef => ({
    ...d,
    expr: expr(d.vector),
  });
  return [
    def(
      {
        alert: 'AIOpsOperatorDown',
        vector: `up${sel(',endpoint="https"')}`,
        for: '5m',
        severity: 'critical',
        summary: 'No aiops operator replica is up',
        description:
          'Prometheus has scraped no aiops operator replica successfully for 5 minutes: nothing reconciles AITasks and, with every replica gone, conversions of v1/v1alpha1 AITasks fail.',
        action:
          '`kubectl -n <namespace> get pods -l app.kubernetes.io/name=aiops-operator` and `kubectl describe` the pods: crash loops (`kubectl logs --previous`), image pulls, or a ServiceMonitor that no longer matches the metrics Service. A Prometheus that cannot reach port 8443 (NetworkPolicy) looks the same.',
      },
      (v) => `absent(${v} == 1)`,
    ),
    def(
      {
        alert: 'AIOpsOperatorNotLeading',
        vector: `sum by (name) (leader_election_master_status${sel()})`,
        for: '5m',
        severity: 'critical',
        summary: 'No aiops operator replica holds the leader Lease {{ $labels.name }}',
        description:
          'Replicas are up but none has led Lease {{ $labels.name }} for 5 minutes: no AITask is reconciled (conversions still work).',
        action:
          "`kubectl -n <namespace> get lease <name> -o yaml`: a holder that is not a running pod is released after the lease duration; replicas that cannot update the Lease log `leader election failed` (RBAC on leases, apiserver errors: see the dashboard's apiserver panel).",
      },
      (v) => `${v} < 1`,
    ),
    def(
      {
        alert: 'AIOpsReconcileErrors',
        vector: `sum by (controller) (rate(controller_runtime_reconcile_errors_total${sel()}[5m])) / sum by (controller) (rate(controller_runtime_reconcile_total${sel()}[5m]))`,
        for: '15m',
        severity: 'warning',
        summary: 'More than 10% of {{ $labels.controller }} reconciles fail',
        description:
          "{{ $value | humanizePercentage }} of the {{ $labels.controller }} reconciles have ended in an error for 15 minutes; the failing AITasks are retried with backoff, paced per namespace. A tenant's own error is not counted here: a target whose selector cannot be listed with is that AITask's TargetInvalid status, an object refused for good is its Stalled status, and a write that meets a conflict (the object changed since it was read, which its status writers can cause) is a requeue.",
        action:
          "The leader logs each error with its AITask (`kubectl logs` of the leading pod); `kubectl aiops describe <name> -n <ns>` shows what the task's conditions and Events say. Apiserver errors show on the dashboard by code.",
      },
      (v) => `(${v}) > 0.1`,
    ),
    def(
      {
        alert: 'AIOpsReconcilePanics',
        vector: `sum by (controller) (increase(controller_runtime_reconcile_panics_total${sel()}[15m]))`,
        severity: 'warning',
        summary: 'Reconciles of controller {{ $labels.controller }} hit a programming error',
        description:
          'A reconcile threw a TypeError, RangeError or ReferenceError (what a Go reconciler would panic on) in the last 15 minutes; that AITask is retried and the others go on.',
        action:
          "A bug in the operator: find the `stacktrace` in the leader's log and report it with the AITask's spec (`kubectl get at <name> -o yaml`).",
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsTasksStalled',
        vector: `max(aiops_tasks_stalled${sel()})`,
        for: '15m',
        severity: 'warning',
        summary: '{{ $value }} AITasks are Stalled',
        description:
          'AITasks have had Stalled=True for 15 minutes: the operator stopped acting on them until a person fixes what the condition names (attempts used up, a refused query, a missing kind, an invalid object).',
        action:
          "`kubectl get at -A` shows each task's Phase; `kubectl aiops explain-phase <name> -n <ns>` names the Stalled reason and what to change (fix the target by hand, raise spec.remediation.maxAttempts, fix the query).",
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsRemediationsRefused',
        vector: `sum by (reason) (increase(aiops_guardrail_refusals_total${sel()}[15m]))`,
        for: '5m',
        severity: 'warning',
        summary: 'Remediations are refused by a guardrail ({{ $labels.reason }})',
        description:
          'In the last 15 minutes the operator wanted to act and a guardrail refused it: {{ $labels.reason }} ({{ $value | humanize }} times). The workloads those AITasks watch stay unhealthy.',
        action:
          "By reason: AwaitingApproval: approve with `kubectl aiops approve <name> -n <ns>`; ConcurrencyCapReached or CordonCapReached: a cap (--max-concurrent-remediations, --max-cordoned-nodes-percent) is full, see which tasks hold it; TargetNotFound, CrossNamespaceRefused, DuplicateTarget: fix the AITask's spec; TargetInvalid: whoever writes the target fixes the field the task's status names. `kubectl aiops describe` names the reason per task.",
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsLLMCircuitOpen',
        vector: `max(aiops_llm_circuit_breakers_open${sel()})`,
        for: '5m',
        severity: 'warning',
        summary: '{{ $value }} LLM circuit breakers are open',
        description:
          'LLM calls to an endpoint and model failed --llm-failure-threshold times in a row; its breaker has refused calls for 5 minutes, so those AITasks decide by their rules alone.',
        action:
          "The leader's log names the endpoint and the failure (`LLMTimeout`, `LLMHTTPError`, …; the dashboard's LLM panel counts them by outcome): check the endpoint, its API key (Secret aiops-llm) and --llm-endpoint-allowlist. The breaker retries one call after --llm-circuit-cooloff.",
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsConversionFailing',
        vector: `sum by (reason) (rate(aiops_conversion_failures_total${sel(',reason=~"conversion|stash_key_unavailable|timeout|internal"')}[5m]))`,
        for: '5m',
        severity: 'critical',
        summary: 'The conversion webhook fails ConversionReviews ({{ $labels.reason }})',
        description:
          'For 5 minutes the conversion webhook has answered ConversionReviews with a Failure ({{ $labels.reason }}): reads and writes of AITasks at another version than the stored one fail.',
        action:
          '`kubectl logs` of the operator pods (component `conversion-webhook`): `stash_key_unavailable` means the conversion key Secret cannot be read (RBAC, deleted Secret); `conversion` names the object that cannot be converted; `internal` and `timeout` are bugs or overload. What other callers can send is not counted here: `malformed` (what the apiserver never sends: an object invalid at its own version, a version not served), oversized, `slow_client`, `peer_share`, `cpu_share` and `cpu_total`.',
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsConversionCertificateRejected',
        vector: `max(aiops_conversion_ca_bundle_mismatch${sel()}) * on() sum(rate(aiops_conversion_certificate_rejections_total${sel()}[5m]))`,
        for: '5m',
        severity: 'critical',
        summary: "The apiserver rejects the conversion webhook's certificate",
        description:
          "For 5 minutes TLS clients have refused the webhook's serving certificate and the CRD's caBundle does not verify it (aiops_conversion_ca_bundle_mismatch): the apiserver cannot trust the webhook, and every conversion fails. A rejection alone (a client without the CA, which anyone can make) does not fire it.",
        action:
          "Compare the CRD's `spec.conversion.webhook.clientConfig.caBundle` with the CA of the serving certificate Secret (plain install: aiops-webhook-service-cert; OLM: aiops-operator-service-cert). The operator puts the caBundle back on its next certificate sync; restarting one replica forces it.",
      },
      (v) => `${v} > 0`,
    ),
    def(
      {
        alert: 'AIOpsCertificateExpiresSoon',
        vector: `aiops_conversion_certificate_expiration_timestamp_seconds${sel()} - time()`,
        for: '1h',
        severity: 'warning',
        summary: "The conversion webhook's certificate expires in {{ $value | humanizeDuration }}",
        description:
          'The serving certificate {{ $labels.pod }} presents expires in less than 7 days and was not renewed: once it expires every conversion fails.',
        action:
          'Plain install: the operator renews the certificate in Secret aiops-webhook-service-cert (--self-signed-cert, checked every --cert-sync-interval); its log says why it could not. OLM: OLM rotates aiops-operator-service-cert; check the CSV and olm-operator. A pod keeps serving a renewed certificate within seconds (files are reloaded).',
      },
      (v) => `(${v}) < 7 * 86400`,
    ),
    def(
      {
        alert: 'AIOpsCertificateExpiresVerySoon',
        vector: `aiops_conversion_certificate_expiration_timestamp_seconds${sel()} - time()`,
        for: '10m',
        severity: 'critical',
        summary: "The conversion webhook's certificate expires in {{ $value | humanizeDuration }}",
        description:
          'The serving certificate {{ $labels.pod }} presents expires within a day: after that every conversion fails.',
        action: 'As AIOpsCertificateExpiresSoon, now: renew the Secret by hand if the operator cannot.',
      },
      (v) => `(${v}) < 86400`,
    ),
  ];
}

/** A Prometheus rule (the `rules:` entry of a group). */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

/** The rule group of `alertDefs(job)`, as both a rule file and a PrometheusRule's spec hold it. */
export function ruleGroup(job: string): { name: string; rules: AlertingRule[] } {
  return {
    name: RULE_GROUP,
    rules: alertDefs(job).map((d) => ({
      alert: d.alert,
      expr: d.expr,
      ...(d.for !== undefined ? { for: d.for } : {}),
      labels: { severity: d.severity },
      annotations: { summary: d.summary, description: d.description },
    })),
  };
}

/** The Markdown table of docs/operator.md's Monitoring section: alert, severity, meaning, what to do. */
export function alertsTable(job: string): string {
  const cell = (s: string): string =>
    s
      .replaceAll('|', '\\|')
      .replaceAll(/\{\{ \$labels\.(\w+) \}\}/g, '`$1`')
      .replaceAll(/\{\{[^}]*\}\}/g, '`value`');
  return [
    '| Alert | Severity | Means | What to do |',
    '| --- | --- | --- | --- |',
    ...alertDefs(job).map(
      (d) => `| \`${d.alert}\` | ${d.severity} | ${cell(d.description)} | ${cell(d.action)} |`,
    ),
    '',
  ].join('\n');
}

/** The comments docs/operator.md's alerts table sits between; `npm run generate` writes it. */
export const ALERTS_TABLE_MARKERS = {
  begin: '<!-- alerts-table:begin (npm run generate writes this table from scripts/monitoring/alerts.ts) -->',
  end: '<!-- alerts-table:end -->',
} as const;

/** `doc` with `table` between ALERTS_TABLE_MARKERS; throws when the markers are missing. */
export function withAlertsTable(doc: string, table: string): string {
  const begin = doc.indexOf(ALERTS_TABLE_MARKERS.begin);
  const end = doc.indexOf(ALERTS_TABLE_MARKERS.end);
  if (begin < 0 || end < begin) throw new Error('docs/operator.md lacks the alerts-table markers');
  return `${doc.slice(0, begin + ALERTS_TABLE_MARKERS.begin.length)}\n\n${table.trimEnd()}\n\n${doc.slice(end)}`;
}
