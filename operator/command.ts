// The operator's command line: every flag with its default and validation, turned into
// OperatorOptions. The process entry point (cmd/operator.ts, `npm run operator`) adds the
// hosted webhook's flags and runs it. Every flag can also come from the environment
// (SettingsCommand: AIOPS_ + the flag's name), because an OLM Subscription can set a
// container's env but not its args; a flag given on the command line wins. The names
// kubebuilder/controller-runtime operators use are accepted too (--metrics-bind-address,
// --health-probe-bind-address, --zap-log-level, --zap-encoder).

import { Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../lib/go-duration.ts';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { DEFAULTS } from './decision/decide.ts';
import { createLogger, parseLogLevel } from '../lib/log.ts';
import type { OperatorOptions } from './assembly.ts';
import { parseAllowlist, type AllowRule } from './llm/policy.ts';
import { DEFAULT_QUERY_TEMPLATE } from './edges/prometheus.ts';
import { DEFAULT_QUERY_BOUNDS } from './decision/query-cost.ts';
import { DEFAULT_MAX_COMPLETION_TOKENS } from './llm/protocol.ts';
import { DEFAULT_MARK_SWEEP_MS } from './mark-sweep.ts';
import { DEFAULT_LLM_MAX_TIMEOUT_MS } from './preflight.ts';

/**
 * Default of `--max-concurrent-reconciles`: 4, so that LLM calls (≤ --llm-max-timeout each)
 * and Prometheus queries in flight for some tenants leave workers for the others, while
 * staying within the operator's API rate limits and 2 cores.
 */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 4;

function allowlist(value: string): AllowRule[] {
  try {
    return parseAllowlist(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function envName(value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    throw new InvalidArgumentError(`expected an environment variable name, got "${value}"`);
  return value;
}

function int(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}, got "${value}"`);
    return n;
  };
}

function temperature(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 2)
    throw new InvalidArgumentError(`expected a temperature from 0 to 2, got "${value}"`);
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

/** `true`/`false` (also 1/0, yes/no, on/off) for a switch given a value or set from the environment. */
function bool(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${value}"`);
}

/**
 * A switch (default off, or on when `on`): `--name` or `--name=true` turns it on,
 * `--name=false` off, and so does its environment variable's value (commander would turn a
 * plain boolean on for any value).
 */
export function switchOption(flags: string, description: string, on = false): Option {
  return new Option(`${flags} [bool]`, description).preset('true').argParser(bool).default(on);
}

/** Where an endpoint listens, from controller-runtime's `[host]:port` form. */
export interface HostPort {
  /** IP to bind; `undefined` when the address leaves it out (`:8080`). */
  readonly host?: string;
  readonly port: number;
}

/**
 * Parses a controller-runtime bind address: `:8080`, `127.0.0.1:8080`, `[::1]:8080`. The
 * value "0" (controller-runtime's "off") is refused: this operator always serves its endpoints.
 */
export function hostPort(value: string): HostPort {
  if (value.trim() === '0')
    throw new InvalidArgumentError(
      '"0" (off) is not supported: the operator always serves /metrics, /healthz and /readyz; give [host]:port',
    );
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  const port = Number(m?.[3]);
  if (!m || port > 65535)
    throw new InvalidArgumentError(`expected [host]:port such as :8080 or 127.0.0.1:8080, got "${value}"`);
  const host = m[1] ?? m[2] ?? '';
  return host === '' ? { port } : { host, port };
}

/**
 * controller-runtime's `--zap-log-level`: debug, info, error, or an integer verbosity > 0
 * (any is debug here); plus warn. Returns one of the operator's levels.
 */
export function logLevel(value: string): 'debug' | 'info' | 'warn' | 'error' {
  const v = value.trim().toLowerCase();
  if (v === 'debug' || v === 'info' || v === 'warn' || v === 'error') return v;
  if (v === 'panic' || v === 'dpanic' || v === 'fatal') return 'error';
  if (/^[1-9]\d*$/.test(v)) return 'debug';
  throw new InvalidArgumentError(`expected debug, info, warn, error or a verbosity > 0, got "${value}"`);
}

/** The environment variable of a long flag: `--prometheus-url` → `AIOPS_PROMETHEUS_URL`. */
function envFor(long: string): string {
  return `AIOPS_${long.replace(/^--/, '').replaceAll('-', '_').toUpperCase()}`;
}

/**
 * A Command whose every option, as it is added, gets its environment variable (envFor of
 * its long name; shown in --help), except --kubeconfig, whose variable is the standard
 * KUBECONFIG read by the client. Commander lets a command-line flag override the variable.
 */
export class SettingsCommand extends Command {
  override addOption(option: Option): this {
    if (option.long !== undefined && option.long !== '--kubeconfig' && option.envVar === undefined)
      option.env(envFor(option.long));
    return super.addOption(option);
  }
}

/** Parses a Go duration ("500ms", "15s", "1m30s", "1h") into ms, as controller-runtime's flags do. */
export function duration(value: string): number {
  const ms = parseGoDuration(value.trim());
  if (ms === undefined)
    throw new InvalidArgumentError(`expected a duration like 500ms, 15s, 1m30s or 1h, got "${value}"`);
  return ms;
}

/** A Go duration above zero, in ms (`--max-query-range`, `--min-query-resolution`). */
export function positiveDuration(value: string): number {
  const ms = duration(value);
  if (ms <= 0) throw new InvalidArgumentError(`expected a duration above zero, got "${value}"`);
  return ms;
}

/** `--llm-namespace-calls-per-hour` when unset: a quarter of the operator-wide `callsPerHour`, at least 1 (0 when it is 0). */
export function defaultNamespaceCallsPerHour(callsPerHour: number): number {
  return callsPerHour === 0 ? 0 : Math.max(1, Math.floor(callsPerHour / 4));
}

/** The env var the API key is read from unless --llm-api-key-env names another. */
export const LLM_API_KEY_ENV = 'AIOPS_LLM_API_KEY';

/** The operator's command line; flags the entry point adds get their variables too. */
export function buildCommand(run: (o: OperatorOptions) => Promise<void>): Command {
  return new SettingsCommand('operator')
    .description('aiops operator: reconciles AITasks (aiops.example.com/v2) against Prometheus metrics')
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (env: KUBECONFIG, read by the client; default: ~/.kube/config, else in-cluster)',
    )
    .option('--context <name>', 'kubeconfig context (default: current-context)')
    .option('--namespace <ns>', 'watch only this namespace (default: all namespaces)')
    .option(
      '--watch-label-selector <selector>',
      'reconcile only AITasks matching this label selector, e.g. shard=a (default: all)',
    )
    .option(
      '--prometheus-url <url>',
      'Prometheus base URL, e.g. http://prometheus-operated.monitoring.svc:9090 (no default: without it every AITask reports MetricsAvailable=False, reason PrometheusNotConfigured, saying what to set)',
    )
    .option(
      '--default-query <promql>',
      'query when trigger.query is empty; {{namespace}} and {{name}} are the target',
      DEFAULT_QUERY_TEMPLATE,
    )
    .addOption(switchOption('--allow-cross-namespace', 'allow targets outside the AITask namespace'))
    .addOption(
      switchOption(
        '--confine-queries',
        'add namespace="<target namespace>" to every selector of trigger.query and refuse queries that cannot be confined; false only on single-tenant clusters',
        true,
      ),
    )
    .option(
      '--max-query-range <d>',
      "widest window a trigger.query may read: each range selector's range plus the ranges of the subqueries around it; a query over it is refused before it is sent (MetricsAvailable=False, reason QueryTooExpensive). Offsets and @ move a window without widening it and are not bounded",
      positiveDuration,
      DEFAULT_QUERY_BOUNDS.maxRangeMs,
    )
    .option(
      '--min-query-resolution <d>',
      'finest step a subquery of trigger.query may have; a subquery with a finer step, or none written (Prometheus would use its evaluation interval), is refused before it is sent (reason QueryTooExpensive)',
      positiveDuration,
      DEFAULT_QUERY_BOUNDS.minResolutionMs,
    )
    .option(
      '--max-concurrent-reconciles <n>',
      'parallel reconciles; the default leaves workers for other tenants while LLM calls (--llm-max-timeout) and Prometheus queries (5 s, sent as their timeout so Prometheus stops them too) hold some',
      int(1, 1000),
      DEFAULT_MAX_CONCURRENT_RECONCILES,
    )
    .option('--rate-limit-qps <n>', 'overall retry rate (per second)', positive, 10)
    .option('--rate-limit-burst <n>', 'overall retry burst', int(1), 100)
    .option(
      '--namespace-reconcile-qps <n>',
      "reconciles per second one namespace's AITask patches and target Deployment changes trigger; over it they are delayed, never dropped",
      positive,
      5,
    )
    .option(
      '--namespace-reconcile-burst <n>',
      'patch-triggered reconciles of one namespace let through at once before --namespace-reconcile-qps paces them',
      int(1),
      20,
    )
    .option(
      '--default-interval-seconds <s>',
      'intervalSeconds when unset',
      int(10, 3600),
      DEFAULTS.intervalSeconds,
    )
    .option(
      '--default-cooldown-seconds <s>',
      'cooldownSeconds when unset',
      int(0, 86400),
      DEFAULTS.cooldownSeconds,
    )
    .option('--default-max-attempts <n>', 'maxAttempts when unset', int(1, 100), DEFAULTS.maxAttempts)
    .option('--default-min-replicas <n>', 'scale.minReplicas when unset', int(0), DEFAULTS.minReplicas)
    .option('--default-max-replicas <n>', 'scale.maxReplicas when unset', int(1), DEFAULTS.maxReplicas)
    .option(
      '--max-concurrent-remediations <n>',
      'AITasks with a remediation under way at once, cluster-wide (0: no cap)',
      int(0, 100_000),
      10,
    )
    .option(
      '--max-concurrent-remediations-per-namespace <n>',
      'AITasks of one namespace with a remediation under way at once, so one namespace cannot hold the whole pool (0: only the cluster-wide cap)',
      int(0, 100_000),
      5,
    )
    .option(
      '--max-cordoned-nodes-percent <pct>',
      'CordonNode never leaves more than this share of all nodes unschedulable',
      int(0, 100),
      34,
    )
    .option(
      '--max-cordoned-nodes-per-namespace <n>',
      'nodes the AITasks of one namespace may hold cordoned at once, so one namespace cannot use up --max-cordoned-nodes-percent (0: only that cap)',
      int(0, 100_000),
      1,
    )
    .option(
      '--cordon-mark-sweep-interval <d>',
      'how often the leader releases cordon marks of deleted AITasks (uncordoning a node only while the mark still holds its cordon) and drops marks whose cordon someone else lifted; also once when it starts leading',
      duration,
      DEFAULT_MARK_SWEEP_MS,
    )
    .option(
      '--llm-endpoint-allowlist <list>',
      'comma-separated endpoints the LLM advisor may call: URL prefixes (http://vllm.ai.svc:8000/v1/: that scheme, host, port (the default of the scheme when none is written) and paths under it) or host patterns (llm.example.com, *.example.com, 10.0.0.5:8443: https only, that port or 443, any path); empty: none',
      allowlist,
      [],
    )
    .option(
      '--llm-api-key-env <name>',
      'env var of the operator holding the LLM API key, sent as a Bearer token (the manifests map the optional Secret aiops-llm into it); empty or unset: requests carry no Authorization header',
      envName,
      LLM_API_KEY_ENV,
    )
    .option('--llm-default-model <name>', 'model when spec.decision.llm.model is unset', 'gpt-4o-mini')
    .option(
      '--llm-max-completion-tokens <n>',
      'completion-token limit of each request, sent as both max_completion_tokens and max_tokens (llama-cpp-python and Ollama read only max_tokens; an endpoint that refuses one gets the other alone)',
      int(1, 100_000),
      DEFAULT_MAX_COMPLETION_TOKENS,
    )
    .option(
      '--llm-temperature <t>',
      'sampling temperature sent with each request (0 to 2); unset: not sent, the model uses its default',
      temperature,
    )
    .option(
      '--llm-max-timeout <d>',
      "longest an LLM call may hold a worker: caps each AITask's llm.timeoutSeconds and is the timeout of those that leave it unset",
      duration,
      DEFAULT_LLM_MAX_TIMEOUT_MS,
    )
    .option('--llm-calls-per-hour <n>', 'LLM calls per sliding hour, all AITasks together', int(0), 120)
    .option('--llm-task-calls-per-hour <n>', 'LLM calls per sliding hour for one AITask', int(0), 12)
    .option(
      '--llm-namespace-calls-per-hour <n>',
      'LLM calls per sliding hour for all AITasks of one namespace together, so one tenant cannot use up --llm-calls-per-hour (default: a quarter of it, at least 1)',
      int(0),
    )
    .option(
      '--llm-failure-threshold <n>',
      'consecutive failed LLM calls of one model to one endpoint that open the circuit breaker of that endpoint and model',
      int(1, 1000),
      3,
    )
    .option(
      '--llm-circuit-cooloff <d>',
      'how long an open circuit breaker refuses calls before one trial call',
      duration,
      300_000,
    )
    .addOption(
      switchOption(
        '--leader-elect',
        'elect a leader on a coordination.k8s.io Lease; only the leader reconciles',
      ),
    )
    .option(
      '--leader-election-namespace <ns>',
      'namespace of the Lease',
      process.env.POD_NAMESPACE ?? DEFAULT_INSTALL.namespace,
    )
    .option(
      '--leader-election-id <name>',
      "name of the Lease; the shipped Role grants get and update on the Lease by name (resourceNames: [aiops-operator-leader]), so another id needs that name edited in the Role's resourceNames",
      'aiops-operator-leader',
    )
    .option('--lease-duration <d>', 'how long a Lease is held without renewal', duration, 15_000)
    .option('--renew-deadline <d>', 'how long the leader retries renewing before giving up', duration, 10_000)
    .option('--retry-period <d>', 'wait between Lease attempts', duration, 2_000)
    .option('--metrics-port <port>', 'port of /metrics (0: a free port)', int(0, 65535), 8080)
    .option('--health-port <port>', 'port of /healthz and /readyz (0: a free port)', int(0, 65535), 8081)
    .option('--bind-address <ip>', 'address the endpoints listen on', '0.0.0.0')
    .addOption(
      switchOption(
        '--metrics-secure',
        'serve /metrics over HTTPS, only to bearer tokens a TokenReview authenticates and a SubjectAccessReview allows to get /metrics (bind the aiops-metrics-reader ClusterRole); false: plain HTTP to anyone who reaches the port, as for a local run',
        true,
      ),
    )
    .option(
      '--metrics-cert-path <dir>',
      'directory with the /metrics serving certificate (reloaded when it changes); unset: a self-signed certificate made at start',
    )
    .option('--metrics-cert-name <file>', 'certificate file in --metrics-cert-path', 'tls.crt')
    .option('--metrics-cert-key <file>', 'key file in --metrics-cert-path', 'tls.key')
    .addOption(
      new Option(
        '--metrics-bind-address <[host]:port>',
        "controller-runtime's name: where /metrics listens (instead of --metrics-port, and --bind-address for it)",
      )
        .argParser(hostPort)
        .conflicts('metricsPort'),
    )
    .addOption(
      new Option(
        '--health-probe-bind-address <[host]:port>',
        "controller-runtime's name: where /healthz and /readyz listen (instead of --health-port, and --bind-address for them)",
      )
        .argParser(hostPort)
        .conflicts('healthPort'),
    )
    .addOption(
      new Option(
        '--zap-log-level, --log-level <level>',
        'log level: debug, info, warn, error, or a zap verbosity > 0 (debug)',
      )
        .argParser(logLevel)
        .default('info'),
    )
    .addOption(
      new Option(
        '--zap-encoder <encoding>',
        "log encoding, as controller-runtime's zap flag: json (one object per line: ts, level, logger, msg, fields; stacktrace on errors) or console (one readable line each); default: console on a terminal, else json",
      ).choices(['json', 'console']),
    )
    .action(async (f: Record<string, unknown>) => {
      const str = (k: string): string | undefined => (typeof f[k] === 'string' ? f[k] : undefined);
      const at = (k: string): HostPort | undefined => f[k] as HostPort | undefined;
      const metricsAt = at('metricsBindAddress');
      const healthAt = at('healthProbeBindAddress');
      const num = (k: string): number => f[k] as number;
      const opt = <K extends string>(key: K, v: string | undefined): Partial<Record<K, string>> =>
        v === undefined ? {} : ({ [key]: v } as Record<K, string>);
      await run({
        ...opt('kubeconfig', str('kubeconfig')),
        ...opt('context', str('context')),
        ...opt('namespace', str('namespace')),
        ...opt('watchLabelSelector', str('watchLabelSelector')),
        prometheusUrl: str('prometheusUrl') === '' ? undefined : str('prometheusUrl'),
        defaultQuery: str('defaultQuery') ?? DEFAULT_QUERY_TEMPLATE,
        allowCrossNamespace: f.allowCrossNamespace === true,
        confineQueries: f.confineQueries === true,
        queryBounds: { maxRangeMs: num('maxQueryRange'), minResolutionMs: num('minQueryResolution') },
        maxConcurrentReconciles: num('maxConcurrentReconciles'),
        rateLimitQps: num('rateLimitQps'),
        rateLimitBurst: num('rateLimitBurst'),
        namespaceReconcileQps: num('namespaceReconcileQps'),
        namespaceReconcileBurst: num('namespaceReconcileBurst'),
        defaults: {
          intervalSeconds: num('defaultIntervalSeconds'),
          cooldownSeconds: num('defaultCooldownSeconds'),
          maxAttempts: num('defaultMaxAttempts'),
          minReplicas: num('defaultMinReplicas'),
          maxReplicas: num('defaultMaxReplicas'),
        },
        maxConcurrentRemediations: num('maxConcurrentRemediations'),
        maxConcurrentRemediationsPerNamespace: num('maxConcurrentRemediationsPerNamespace'),
        maxCordonedNodesPercent: num('maxCordonedNodesPercent'),
        maxCordonedNodesPerNamespace: num('maxCordonedNodesPerNamespace'),
        cordonMarkSweepMs: Math.max(1000, num('cordonMarkSweepInterval')),
        llm: {
          allowlist: f.llmEndpointAllowlist as AllowRule[],
          apiKeyEnv: str('llmApiKeyEnv') ?? LLM_API_KEY_ENV,
          defaultModel: str('llmDefaultModel') ?? 'gpt-4o-mini',
          maxCompletionTokens: num('llmMaxCompletionTokens'),
          ...(typeof f.llmTemperature === 'number' ? { temperature: f.llmTemperature } : {}),
          callsPerHour: num('llmCallsPerHour'),
          taskCallsPerHour: num('llmTaskCallsPerHour'),
          namespaceCallsPerHour:
            typeof f.llmNamespaceCallsPerHour === 'number'
              ? f.llmNamespaceCallsPerHour
              : defaultNamespaceCallsPerHour(num('llmCallsPerHour')),
          failureThreshold: num('llmFailureThreshold'),
          circuitCoolOffMs: num('llmCircuitCooloff'),
          maxTimeoutMs: Math.max(1, num('llmMaxTimeout')),
        },
        leaderElect: f.leaderElect === true,
        leaderElectionNamespace: str('leaderElectionNamespace') ?? DEFAULT_INSTALL.namespace,
        leaderElectionId: str('leaderElectionId') ?? 'aiops-operator-leader',
        leaseDurationMs: num('leaseDuration'),
        renewDeadlineMs: num('renewDeadline'),
        retryPeriodMs: num('retryPeriod'),
        metricsPort: metricsAt?.port ?? num('metricsPort'),
        healthPort: healthAt?.port ?? num('healthPort'),
        bindAddress: str('bindAddress') ?? '0.0.0.0',
        metricsSecure: f.metricsSecure === true,
        ...opt('metricsCertPath', str('metricsCertPath')),
        metricsCertName: str('metricsCertName') ?? 'tls.crt',
        metricsCertKey: str('metricsCertKey') ?? 'tls.key',
        ...(metricsAt ? { metricsHost: metricsAt.host ?? '0.0.0.0' } : {}),
        ...(healthAt ? { healthHost: healthAt.host ?? '0.0.0.0' } : {}),
        log: createLogger('operator', {
          level: parseLogLevel(str('logLevel') ?? 'info'),
          encoding:
            str('zapEncoder') === 'console' || (str('zapEncoder') === undefined && process.stdout.isTTY)
              ? 'console'
              : 'json',
        }),
      });
    });
}
