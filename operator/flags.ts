// The operator's flags that say what it watches and how it decides: the table
// (lib/options-table.ts) of every such flag with its parser, default, help and docs row, in
// --help order. flags-serving.ts has the rest (leader election, endpoints, logs); command.ts
// turns both into OperatorOptions.

import { flag, integer, text, toggle } from '../lib/options-table.ts';
import { DEFAULTS } from './decision/decide.ts';
import { DEFAULT_QUERY_BOUNDS } from './decision/query-cost.ts';
import { DEFAULT_QUERY_TEMPLATE } from './decision/metric-query.ts';
import { DEFAULT_MAX_COMPLETION_TOKENS } from './llm/protocol.ts';
import { DEFAULT_MARK_SWEEP_MS } from './mark-sweep.ts';
import { DEFAULT_LLM_MAX_TIMEOUT_MS } from './preflight.ts';
import { allowlist, duration, envName, positive, positiveDuration, temperature } from './flag-parsers.ts';

/**
 * Default of `--max-concurrent-reconciles`: 4, so that LLM calls (≤ --llm-max-timeout each)
 * and Prometheus queries in flight for some tenants leave workers for the others, while
 * staying within the operator's API rate limits and 2 cores.
 */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 4;

/** The env var the API key is read from unless --llm-api-key-env names another. */
export const LLM_API_KEY_ENV = 'AIOPS_LLM_API_KEY';

/** What the operator watches, where it reads metrics, and its reconcile and remediation limits. */
export const WATCH_FLAGS = {
  kubeconfig: flag({
    flags: '--kubeconfig <path>',
    help: 'kubeconfig file (env: KUBECONFIG, read by the client; default: ~/.kube/config, else in-cluster)',
    parse: text,
    env: false,
    docsEnv: 'KUBECONFIG',
    docs: { default: '`~/.kube/config`, else in-cluster', meaning: 'kubeconfig file' },
  }),
  context: flag({
    flags: '--context <name>',
    help: 'kubeconfig context (default: current-context)',
    parse: text,
    docs: { default: 'current-context', meaning: 'kubeconfig context' },
  }),
  namespace: flag({
    flags: '--namespace <ns>',
    help: 'watch only this namespace (default: all namespaces)',
    parse: text,
    docs: { default: 'all namespaces', meaning: 'watch only this namespace' },
  }),
  watchLabelSelector: flag({
    flags: '--watch-label-selector <selector>',
    help: 'reconcile only AITasks matching this label selector, e.g. shard=a (default: all)',
    parse: text,
    docs: {
      default: 'all AITasks',
      meaning:
        'reconcile only AITasks matching this label selector, e.g. `shard=a` (Deployments are still read wherever they are)',
    },
  }),
  prometheusUrl: flag({
    flags: '--prometheus-url <url>',
    help: 'Prometheus base URL, e.g. http://prometheus-operated.monitoring.svc:9090 (no default: without it every AITask reports MetricsAvailable=False, reason PrometheusNotConfigured, saying what to set)',
    parse: text,
    docs: {
      default: 'none (required)',
      meaning:
        'Prometheus base URL, e.g. `http://prometheus-operated.monitoring.svc:9090`; without it every AITask reports MetricsAvailable=False, reason `PrometheusNotConfigured`, saying what to set',
    },
  }),
  defaultQuery: flag({
    flags: '--default-query <promql>',
    help: "query when trigger.query is empty; {{namespace}}, {{name}} and {{pods}} (its pods' names) are the target's",
    parse: text,
    default: DEFAULT_QUERY_TEMPLATE,
    docs: {
      default: "CPU rate of the target's pods",
      meaning:
        'PromQL template when `trigger.query` is empty: `{{namespace}}` and `{{name}}` are the target’s, `{{pods}}` a regular expression of its pods’ names (`NAME-[a-z0-9]+-[a-z0-9]+` for a Deployment, `NAME-[0-9]+` for a StatefulSet, `NAME-.+` for another kind, whose pods are named as its controller names them: give such a task its own `trigger.query` when another workload’s pods share that prefix)',
    },
  }),
  allowCrossNamespace: toggle(
    '--allow-cross-namespace',
    'allow targets outside the AITask namespace',
    false,
    { default: 'off', meaning: 'allow targets outside the AITask namespace' },
  ),
  confineQueries: toggle(
    '--confine-queries',
    'add namespace="<target namespace>" to every selector of trigger.query and refuse queries that cannot be confined; false only on single-tenant clusters',
    true,
    {
      default: 'on',
      meaning:
        'add `namespace="<target namespace>"` to every selector of `trigger.query` and refuse a query that cannot be confined (see Security); `false` only on single-tenant clusters',
    },
  ),
  maxQueryRange: flag({
    flags: '--max-query-range <d>',
    help: "widest window a trigger.query may read: each range selector's range plus the ranges of the subqueries around it; a query over it is refused before it is sent (MetricsAvailable=False, reason QueryTooExpensive). Offsets and @ move a window without widening it and are not bounded",
    parse: positiveDuration,
    default: DEFAULT_QUERY_BOUNDS.maxRangeMs,
    docs: {
      default: '`1h`',
      meaning:
        "widest window a `trigger.query` may read: a range selector's range plus the ranges of every subquery around it (`max_over_time(rate(x[5m])[1h:10s])` reads 1h5m); a query over it is never sent: MetricsAvailable=False, reason `QueryTooExpensive`, naming the part and this flag. Offsets and `@` move a window without widening it and are not bounded (see Security)",
    },
  }),
  minQueryResolution: flag({
    flags: '--min-query-resolution <d>',
    help: 'finest step a subquery of trigger.query may have; a subquery with a finer step, or none written (Prometheus would use its evaluation interval), is refused before it is sent (reason QueryTooExpensive)',
    parse: positiveDuration,
    default: DEFAULT_QUERY_BOUNDS.minResolutionMs,
    docs: {
      default: '`10s`',
      meaning:
        'finest step a subquery of `trigger.query` may have; a finer one, or none written (Prometheus would use its own evaluation interval), is refused the same way. With the defaults a subquery evaluates at most 361 steps',
    },
  }),
  maxConcurrentReconciles: flag({
    flags: '--max-concurrent-reconciles <n>',
    help: 'parallel reconciles; the default leaves workers for other tenants while LLM calls (--llm-max-timeout) and Prometheus queries (5 s, sent as their timeout so Prometheus stops them too) hold some',
    parse: integer(1, 1000),
    default: DEFAULT_MAX_CONCURRENT_RECONCILES,
    docs: {
      default: '`4`',
      meaning:
        "parallel reconciles; 4, not controller-runtime's 1: an LLM call holds a worker up to `--llm-max-timeout` and a Prometheus query up to 5 s (sent to Prometheus as the query's `timeout`, so it stops the query too), so a few tenants' slow calls leave workers for the rest; reconciles mostly wait on I/O, so 4 fit one Node thread and the manifests' 50m CPU / 384Mi; keys are handed out round-robin across namespaces, a namespace holding at most its fair share of the workers (the workers divided among the namespaces with work, rounded up) while another has keys waiting",
    },
  }),
  rateLimitQps: flag({
    flags: '--rate-limit-qps <n>',
    help: 'overall retry rate (per second) of failed reconciles; one namespace gets a fifth of it',
    parse: positive,
    default: 10,
    docs: {
      default: '`10`',
      meaning:
        "overall retry rate (per second) of failed reconciles, taken as each retry comes due; each namespace's retries have their own bucket of a fifth of it (and of the burst), so one namespace's failing AITasks never delay another's retries",
    },
  }),
  rateLimitBurst: flag({
    flags: '--rate-limit-burst <n>',
    help: 'overall retry burst; one namespace gets a fifth of it',
    parse: integer(1),
    default: 100,
    docs: { default: '`100`', meaning: 'overall retry burst; one namespace gets a fifth of it (at least 1)' },
  }),
  namespaceReconcileQps: flag({
    flags: '--namespace-reconcile-qps <n>',
    help: "reconciles per second one namespace's objects trigger (its AITask patches and deletions, its target workloads' changes), whichever namespace's AITasks they reconcile; over it they are delayed, never dropped",
    parse: positive,
    default: 5,
    docs: {
      default: '`5`',
      meaning:
        "reconciles per second that one namespace's objects trigger: its AITasks' patches (spec, approval annotation) and deletions (the other tasks on the same target), and changes of its target workloads, whichever namespace's AITasks they reconcile; over it (after the burst) a reconcile is delayed by that namespace's token bucket, never dropped, so one tenant's patch loop cannot spend the operator's API budget nor another tenant's pace",
    },
  }),
  namespaceReconcileBurst: flag({
    flags: '--namespace-reconcile-burst <n>',
    help: 'event-triggered reconciles of one namespace let through at once before --namespace-reconcile-qps paces them',
    parse: integer(1),
    default: 20,
    docs: {
      default: '`20`',
      meaning:
        'event-triggered reconciles of one namespace let through at once before `--namespace-reconcile-qps` paces them',
    },
  }),
  defaultIntervalSeconds: flag({
    flags: '--default-interval-seconds <s>',
    help: 'intervalSeconds when unset',
    parse: integer(10, 3600),
    default: DEFAULTS.intervalSeconds,
    docs: { default: '`60`', meaning: 'intervalSeconds when unset' },
  }),
  defaultCooldownSeconds: flag({
    flags: '--default-cooldown-seconds <s>',
    help: 'cooldownSeconds when unset',
    parse: integer(0, 86400),
    default: DEFAULTS.cooldownSeconds,
    docs: { default: '`300`', meaning: 'cooldownSeconds when unset' },
  }),
  defaultMaxAttempts: flag({
    flags: '--default-max-attempts <n>',
    help: 'maxAttempts when unset',
    parse: integer(1, 100),
    default: DEFAULTS.maxAttempts,
    docs: { default: '`3`', meaning: 'maxAttempts when unset' },
  }),
  defaultMinReplicas: flag({
    flags: '--default-min-replicas <n>',
    help: 'scale.minReplicas when unset',
    parse: integer(0),
    default: DEFAULTS.minReplicas,
    docs: { default: '`1`', meaning: 'scale.minReplicas when unset' },
  }),
  defaultMaxReplicas: flag({
    flags: '--default-max-replicas <n>',
    help: 'scale.maxReplicas when unset',
    parse: integer(1),
    default: DEFAULTS.maxReplicas,
    docs: { default: '`10`', meaning: 'scale.maxReplicas when unset' },
  }),
  maxConcurrentRemediations: flag({
    flags: '--max-concurrent-remediations <n>',
    help: 'AITasks with a remediation under way at once, cluster-wide (0: no cap)',
    parse: integer(0, 100_000),
    default: 10,
    docs: {
      default: '`10`',
      meaning: 'AITasks with a remediation under way at once, cluster-wide (0: no cap)',
    },
  }),
  maxConcurrentRemediationsPerNamespace: flag({
    flags: '--max-concurrent-remediations-per-namespace <n>',
    help: 'AITasks of one namespace with a remediation under way at once, so one namespace cannot hold the whole pool (0: only the cluster-wide cap)',
    parse: integer(0, 100_000),
    default: 5,
    docs: {
      default: '`5`',
      meaning:
        'of those, at most this many AITasks of one namespace, so one namespace cannot hold the whole pool (0: only the cluster-wide cap)',
    },
  }),
  maxCordonedNodesPercent: flag({
    flags: '--max-cordoned-nodes-percent <pct>',
    help: 'CordonNode never leaves more than this share of all nodes unschedulable',
    parse: integer(0, 100),
    default: 34,
    docs: {
      default: '`34`',
      meaning: 'CordonNode never leaves more than this share of all nodes unschedulable',
    },
  }),
  maxCordonedNodesPerNamespace: flag({
    flags: '--max-cordoned-nodes-per-namespace <n>',
    help: 'nodes the AITasks of one namespace may hold cordoned at once, so one namespace cannot use up --max-cordoned-nodes-percent (0: only that cap)',
    parse: integer(0, 100_000),
    default: 1,
    docs: {
      default: '`1`',
      meaning:
        'nodes the AITasks of one namespace may hold cordoned at once (counted by the `aiops.example.com/cordoned-by-namespace` mark), so one namespace cannot use up the share above; `0`: only that share',
    },
  }),
  cordonMarkSweepInterval: flag({
    flags: '--cordon-mark-sweep-interval <d>',
    help: 'how often the leader releases cordon marks of deleted AITasks (uncordoning a node only while the mark still holds its cordon) and drops marks whose cordon someone else lifted; also once when it starts leading',
    parse: duration,
    default: DEFAULT_MARK_SWEEP_MS,
    docs: {
      default: '`5m`',
      meaning:
        'how often the leader (and once when it starts leading) releases cordon marks of AITasks that no longer exist, uncordoning a node only while the mark still holds its cordon, and drops marks whose cordon someone else lifted',
    },
  }),
} as const;

/** The LLM advisor's endpoints, model and limits. */
export const LLM_FLAGS = {
  llmEndpointAllowlist: flag({
    flags: '--llm-endpoint-allowlist <list>',
    help: 'comma-separated endpoints the LLM advisor may call: URL prefixes (http://vllm.ai.svc:8000/v1/: that scheme, host, port (the default of the scheme when none is written) and paths under it) or host patterns (llm.example.com, *.example.com, 10.0.0.5:8443: https only, that port or 443, any path); empty: none',
    parse: allowlist,
    default: [],
    docs: {
      default: 'empty (none)',
      meaning:
        'comma-separated endpoints the LLM advisor may call: URL prefixes (`http://vllm.ai.svc:8000/v1/`: that scheme, host, port (the default of the scheme when none is written) and paths under it) or host patterns (`llm.example.com`, `*.example.com`, `10.0.0.5:8443`: https only, that port or 443, any path); hosts compare as URLs canonicalise them (lower case, punycode; a trailing dot is another host), credentials in the endpoint or an encoded `/` or `\\` in its path are refused; empty: none',
    },
  }),
  llmApiKeyEnv: flag({
    flags: '--llm-api-key-env <name>',
    help: 'env var of the operator holding the LLM API key, sent as a Bearer token (the manifests map the optional Secret aiops-llm into it); empty or unset: requests carry no Authorization header',
    parse: envName,
    default: LLM_API_KEY_ENV,
    docs: {
      default: '`AIOPS_LLM_API_KEY`',
      meaning:
        'env var of the operator holding the LLM API key, sent as a Bearer token (the manifests map the optional Secret aiops-llm into it); empty or unset: requests carry no Authorization header',
    },
  }),
  llmDefaultModel: flag({
    flags: '--llm-default-model <name>',
    help: 'model when spec.decision.llm.model is unset',
    parse: text,
    default: 'gpt-4o-mini',
    docs: { default: '`gpt-4o-mini`', meaning: 'model when spec.decision.llm.model is unset' },
  }),
  llmMaxCompletionTokens: flag({
    flags: '--llm-max-completion-tokens <n>',
    help: 'completion-token limit of each request, sent as both max_completion_tokens and max_tokens (llama-cpp-python and Ollama read only max_tokens; an endpoint that refuses one gets the other alone)',
    parse: integer(1, 100_000),
    default: DEFAULT_MAX_COMPLETION_TOKENS,
    docs: {
      default: '`200`',
      meaning:
        'completion-token limit of each request, sent as both `max_completion_tokens` and `max_tokens` (llama-cpp-python and Ollama read only `max_tokens`; an endpoint that refuses one gets the other alone)',
    },
  }),
  llmTemperature: flag({
    flags: '--llm-temperature <t>',
    help: 'sampling temperature sent with each request (0 to 2); unset: not sent, the model uses its default',
    parse: temperature,
    docs: {
      default: 'not sent',
      meaning:
        'sampling temperature sent with each request (0 to 2); unset: not sent, the model uses its default',
    },
  }),
  llmMaxTimeout: flag({
    flags: '--llm-max-timeout <d>',
    help: "longest an LLM call may hold a worker: caps each AITask's llm.timeoutSeconds and is the timeout of those that leave it unset",
    parse: duration,
    default: DEFAULT_LLM_MAX_TIMEOUT_MS,
    docs: {
      default: '`10s`',
      meaning:
        "longest an LLM call may hold a worker: caps each AITask's `llm.timeoutSeconds` (≤ 120 s in the schema) and is the timeout of those that leave it unset; past it (plus 1 s) the worker stops waiting and the rules decide",
    },
  }),
  llmCallsPerHour: flag({
    flags: '--llm-calls-per-hour <n>',
    help: 'LLM calls per sliding hour, all AITasks together',
    parse: integer(0),
    default: 120,
    docs: { default: '`120`', meaning: 'LLM calls per sliding hour, all AITasks together' },
  }),
  llmTaskCallsPerHour: flag({
    flags: '--llm-task-calls-per-hour <n>',
    help: 'LLM calls per sliding hour for one AITask',
    parse: integer(0),
    default: 12,
    docs: { default: '`12`', meaning: 'LLM calls per sliding hour for one AITask' },
  }),
  llmNamespaceCallsPerHour: flag({
    flags: '--llm-namespace-calls-per-hour <n>',
    help: 'LLM calls per sliding hour for all AITasks of one namespace together, so one tenant cannot use up --llm-calls-per-hour (default: a quarter of it, at least 1)',
    parse: integer(0),
    docs: {
      default: 'a quarter of `--llm-calls-per-hour` (30)',
      meaning:
        'LLM calls per sliding hour for all AITasks of one namespace together, so one tenant cannot use up `--llm-calls-per-hour`; checked before a call',
    },
  }),
  llmFailureThreshold: flag({
    flags: '--llm-failure-threshold <n>',
    help: 'consecutive failed LLM calls of one model to one endpoint that open the circuit breaker of that endpoint and model',
    parse: integer(1, 1000),
    default: 3,
    docs: {
      default: '`3`',
      meaning:
        "consecutive failed LLM calls of one model to one endpoint that open the circuit breaker of that endpoint and model (another model, or another tenant's, is not suspended)",
    },
  }),
  llmCircuitCooloff: flag({
    flags: '--llm-circuit-cooloff <d>',
    help: 'how long an open circuit breaker refuses calls before one trial call',
    parse: duration,
    default: 300_000,
    docs: {
      default: '`5m`',
      meaning: 'how long an open circuit breaker refuses calls before one trial call',
    },
  }),
} as const;
