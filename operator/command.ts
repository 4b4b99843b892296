// The operator's command line: the tables of its flags (flags.ts, flags-serving.ts) under
// their environment variables, the commander program they make, and the OperatorOptions
// the parsed values turn into. Every flag can also come from the environment (AIOPS_ + the
// flag's name), because an OLM Subscription can set a container's env but not its args; a
// flag given on the command line wins. The names kubebuilder/controller-runtime operators use
// are accepted too (--metrics-bind-address, --health-probe-bind-address, --zap-log-level,
// --zap-encoder). The process entry point (cmd/operator.ts) adds the hosted webhook's table.

import { Command } from 'commander';
import { createLogger, parseLogLevel } from '../lib/log.ts';
import { optionsTable, type AnyFlag, type OptionsTable, type Values } from '../lib/options-table.ts';
import type { OperatorOptions } from './assembly.ts';
import { LLM_FLAGS, WATCH_FLAGS } from './flags.ts';
import { LEADER_FLAGS, SERVING_FLAGS } from './flags-serving.ts';

/** The environment variable of a long flag: `--prometheus-url` → `AIOPS_PROMETHEUS_URL`. */
export function aiopsEnv(long: string): string {
  return `AIOPS_${long.replace(/^--/, '').replaceAll('-', '_').toUpperCase()}`;
}

/** Every flag of the operator itself, in --help order. */
export const OPERATOR_FLAGS = { ...WATCH_FLAGS, ...LLM_FLAGS, ...LEADER_FLAGS, ...SERVING_FLAGS };

/** The operator's flags under their AIOPS_ variables (--kubeconfig: the client's KUBECONFIG). */
export const OPERATOR_TABLE = optionsTable(OPERATOR_FLAGS, aiopsEnv);

/** The operator's parsed flags. */
export type OperatorFlagValues = Values<typeof OPERATOR_FLAGS>;

/**
 * The operator's program: its flags, then those of `extra` tables (the hosted webhook's).
 * Parsing throws CommanderError on --help (exit code 0) and on a usage error (after saying
 * what is wrong and pointing at --help), which the entry point turns into exit 2.
 */
export function operatorCommand(
  ...extra: readonly OptionsTable<Readonly<Record<string, AnyFlag>>>[]
): Command {
  const command = new Command('operator').description(
    'aiops operator: reconciles AITasks (aiops.example.com/v2) against Prometheus metrics',
  );
  for (const table of [OPERATOR_TABLE, ...extra]) table.addTo(command);
  return command.showHelpAfterError('(run with --help for every flag)').exitOverride();
}

/** `--llm-namespace-calls-per-hour` when unset: a quarter of the operator-wide `callsPerHour`, at least 1 (0 when it is 0). */
export function defaultNamespaceCallsPerHour(callsPerHour: number): number {
  return callsPerHour === 0 ? 0 : Math.max(1, Math.floor(callsPerHour / 4));
}

function optional<K extends string>(key: K, v: string | undefined): Partial<Record<K, string>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, string>);
}

/**
 * The options the operator runs with, from its parsed flags. `terminal`: whether stdout is a
 * terminal (the log encoding when --zap-encoder is unset: console there, else json).
 */
export function operatorOptions(f: OperatorFlagValues, terminal = process.stdout.isTTY): OperatorOptions {
  const metricsAt = f.metricsBindAddress;
  const healthAt = f.healthProbeBindAddress;
  return {
    ...optional('kubeconfig', f.kubeconfig),
    ...optional('context', f.context),
    ...optional('namespace', f.namespace),
    ...optional('watchLabelSelector', f.watchLabelSelector),
    prometheusUrl: f.prometheusUrl === '' ? undefined : f.prometheusUrl,
    defaultQuery: f.defaultQuery,
    allowCrossNamespace: f.allowCrossNamespace,
    confineQueries: f.confineQueries,
    queryBounds: { maxRangeMs: f.maxQueryRange, minResolutionMs: f.minQueryResolution },
    maxConcurrentReconciles: f.maxConcurrentReconciles,
    rateLimitQps: f.rateLimitQps,
    rateLimitBurst: f.rateLimitBurst,
    namespaceReconcileQps: f.namespaceReconcileQps,
    namespaceReconcileBurst: f.namespaceReconcileBurst,
    defaults: {
      intervalSeconds: f.defaultIntervalSeconds,
      cooldownSeconds: f.defaultCooldownSeconds,
      maxAttempts: f.defaultMaxAttempts,
      minReplicas: f.defaultMinReplicas,
      maxReplicas: f.defaultMaxReplicas,
    },
    maxConcurrentRemediations: f.maxConcurrentRemediations,
    maxConcurrentRemediationsPerNamespace: f.maxConcurrentRemediationsPerNamespace,
    maxCordonedNodesPercent: f.maxCordonedNodesPercent,
    maxCordonedNodesPerNamespace: f.maxCordonedNodesPerNamespace,
    cordonMarkSweepMs: Math.max(1000, f.cordonMarkSweepInterval),
    llm: {
      allowlist: f.llmEndpointAllowlist,
      apiKeyEnv: f.llmApiKeyEnv,
      defaultModel: f.llmDefaultModel,
      maxCompletionTokens: f.llmMaxCompletionTokens,
      ...(f.llmTemperature !== undefined ? { temperature: f.llmTemperature } : {}),
      callsPerHour: f.llmCallsPerHour,
      taskCallsPerHour: f.llmTaskCallsPerHour,
      namespaceCallsPerHour: f.llmNamespaceCallsPerHour ?? defaultNamespaceCallsPerHour(f.llmCallsPerHour),
      failureThreshold: f.llmFailureThreshold,
      circuitCoolOffMs: f.llmCircuitCooloff,
      maxTimeoutMs: Math.max(1, f.llmMaxTimeout),
    },
    leaderElect: f.leaderElect,
    leaderElectionNamespace: f.leaderElectionNamespace,
    leaderElectionId: f.leaderElectionId,
    leaseDurationMs: f.leaseDuration,
    renewDeadlineMs: f.renewDeadline,
    retryPeriodMs: f.retryPeriod,
    metricsPort: metricsAt?.port ?? f.metricsPort,
    healthPort: healthAt?.port ?? f.healthPort,
    bindAddress: f.bindAddress,
    metricsSecure: f.metricsSecure,
    ...optional('metricsCertPath', f.metricsCertPath),
    metricsCertName: f.metricsCertName,
    metricsCertKey: f.metricsCertKey,
    ...(metricsAt ? { metricsHost: metricsAt.host ?? '0.0.0.0' } : {}),
    ...(healthAt ? { healthHost: healthAt.host ?? '0.0.0.0' } : {}),
    log: createLogger('operator', {
      level: parseLogLevel(f.logLevel),
      encoding: f.zapEncoder === 'console' || (f.zapEncoder === undefined && terminal) ? 'console' : 'json',
    }),
  };
}
