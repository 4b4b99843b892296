// The operator's command line: every flag with its default and validation, turned into
// OperatorOptions. The process entry point (manager/main.ts, `npm run operator`) adds the
// hosted webhook's flags and runs it.

import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_INSTALL } from '../api/install.ts';
import { DEFAULTS } from './decide.ts';
import { createLogger, parseLogLevel } from '../api/log.ts';
import type { OperatorOptions } from './manager.ts';
import { DEFAULT_QUERY_TEMPLATE } from './prometheus.ts';

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
    .option('--metrics-port <port>', 'port of /metrics (0: any free port)', int(0, 65535), 8080)
    .option('--health-port <port>', 'port of /healthz and /readyz (0: any free port)', int(0, 65535), 8081)
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
