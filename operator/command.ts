// The operator's command line: every flag with its default and validation, turned into
// OperatorOptions. The process entry point (cmd/operator.ts, `npm run operator`) adds the
// hosted webhook's flags and runs it.

import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { DEFAULTS } from './decision/decide.ts';
import { createLogger, parseLogLevel } from '../api/log.ts';
import type { OperatorOptions } from './assembly.ts';
import { parseAllowlist, type AllowRule } from './llm/policy.ts';
import { DEFAULT_QUERY_TEMPLATE } from './edges/prometheus.ts';

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

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

/** Parses a Go-style duration ("15s", "500ms", "2m") into ms. */
export function duration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration like 15s, 500ms or 2m, got "${value}"`);
  const factor = { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
  return Math.round(Number(m[1]) * factor);
}

/** The operator's command line. */
export function buildCommand(run: (o: OperatorOptions) => Promise<void>): Command {
  return new Command('operator')
    .description('aiops operator: reconciles AITasks (aiops.example.com/v2) against Prometheus metrics')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context (default: current-context)')
    .option('--namespace <ns>', 'watch only this namespace (default: all namespaces)')
    .requiredOption('--prometheus-url <url>', 'Prometheus base URL', 'http://localhost:9090')
    .option(
      '--default-query <promql>',
      'query when trigger.query is empty; {{namespace}} and {{name}} are the target',
      DEFAULT_QUERY_TEMPLATE,
    )
    .option('--allow-cross-namespace', 'allow targets outside the AITask namespace', false)
    .option('--max-concurrent-reconciles <n>', 'parallel reconciles', int(1, 1000), 1)
    .option('--rate-limit-qps <n>', 'overall retry rate (per second)', positive, 10)
    .option('--rate-limit-burst <n>', 'overall retry burst', int(1), 100)
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
      '--max-cordoned-nodes-percent <pct>',
      'CordonNode never leaves more than this share of all nodes unschedulable',
      int(0, 100),
      34,
    )
    .option(
      '--llm-endpoint-allowlist <list>',
      'comma-separated URL prefixes or host patterns (llm.example.com, *.example.com, 10.0.0.5:8000) the LLM advisor may call; empty: none',
      allowlist,
      [],
    )
    .option(
      '--llm-api-key-env <name>',
      "env var of the operator holding the LLM API key (map a Secret of the operator's namespace into it); unset: no key is sent",
      envName,
    )
    .option('--llm-default-model <name>', 'model when spec.decision.llm.model is unset', 'gpt-4o-mini')
    .option('--llm-calls-per-hour <n>', 'LLM calls per sliding hour, all AITasks together', int(0), 120)
    .option('--llm-task-calls-per-hour <n>', 'LLM calls per sliding hour for one AITask', int(0), 12)
    .option(
      '--llm-failure-threshold <n>',
      'consecutive failed LLM calls to one endpoint that open its circuit breaker',
      int(1, 1000),
      3,
    )
    .option(
      '--llm-circuit-cooloff <d>',
      'how long an open circuit breaker refuses calls before one trial call',
      duration,
      300_000,
    )
    .option(
      '--leader-elect',
      'elect a leader on a coordination.k8s.io Lease; only the leader reconciles',
      false,
    )
    .option(
      '--leader-election-namespace <ns>',
      'namespace of the Lease',
      process.env.POD_NAMESPACE ?? DEFAULT_INSTALL.namespace,
    )
    .option('--leader-election-id <name>', 'name of the Lease', 'aiops-operator-leader')
    .option('--lease-duration <d>', 'how long a Lease is held without renewal', duration, 15_000)
    .option('--renew-deadline <d>', 'how long the leader retries renewing before giving up', duration, 10_000)
    .option('--retry-period <d>', 'wait between Lease attempts', duration, 2_000)
    .option('--metrics-port <port>', 'port of /metrics (0: a free port)', int(0, 65535), 8080)
    .option('--health-port <port>', 'port of /healthz and /readyz (0: a free port)', int(0, 65535), 8081)
    .option('--bind-address <ip>', 'address the endpoints listen on', '0.0.0.0')
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['debug', 'info', 'warn', 'error'])
        .default('info'),
    )
    .action(async (f: Record<string, unknown>) => {
      const str = (k: string): string | undefined => (typeof f[k] === 'string' ? f[k] : undefined);
      const num = (k: string): number => f[k] as number;
      const opt = <K extends string>(key: K, v: string | undefined): Partial<Record<K, string>> =>
        v === undefined ? {} : ({ [key]: v } as Record<K, string>);
      await run({
        ...opt('kubeconfig', str('kubeconfig')),
        ...opt('context', str('context')),
        ...opt('namespace', str('namespace')),
        prometheusUrl: str('prometheusUrl') ?? '',
        defaultQuery: str('defaultQuery') ?? DEFAULT_QUERY_TEMPLATE,
        allowCrossNamespace: f.allowCrossNamespace === true,
        maxConcurrentReconciles: num('maxConcurrentReconciles'),
        rateLimitQps: num('rateLimitQps'),
        rateLimitBurst: num('rateLimitBurst'),
        defaults: {
          intervalSeconds: num('defaultIntervalSeconds'),
          cooldownSeconds: num('defaultCooldownSeconds'),
          maxAttempts: num('defaultMaxAttempts'),
          minReplicas: num('defaultMinReplicas'),
          maxReplicas: num('defaultMaxReplicas'),
        },
        maxConcurrentRemediations: num('maxConcurrentRemediations'),
        maxCordonedNodesPercent: num('maxCordonedNodesPercent'),
        llm: {
          allowlist: f.llmEndpointAllowlist as AllowRule[],
          ...opt('apiKeyEnv', str('llmApiKeyEnv')),
          defaultModel: str('llmDefaultModel') ?? 'gpt-4o-mini',
          callsPerHour: num('llmCallsPerHour'),
          taskCallsPerHour: num('llmTaskCallsPerHour'),
          failureThreshold: num('llmFailureThreshold'),
          circuitCoolOffMs: num('llmCircuitCooloff'),
        },
        leaderElect: f.leaderElect === true,
        leaderElectionNamespace: str('leaderElectionNamespace') ?? DEFAULT_INSTALL.namespace,
        leaderElectionId: str('leaderElectionId') ?? 'aiops-operator-leader',
        leaseDurationMs: num('leaseDuration'),
        renewDeadlineMs: num('renewDeadline'),
        retryPeriodMs: num('retryPeriod'),
        metricsPort: num('metricsPort'),
        healthPort: num('healthPort'),
        bindAddress: str('bindAddress') ?? '0.0.0.0',
        log: createLogger('operator', { level: parseLogLevel(str('logLevel') ?? 'info') }),
      });
    });
}
