// The operator's settings as users give them: flags, the environment (what an OLM
// Subscription's spec.config.env can set) with the flag winning, the controller-runtime
// names (the log level checked by what the logger writes), switches turned off by "false",
// and README naming every flag and variable.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, mock, test } from 'node:test';
import type { Logger } from '../lib/log.ts';
import type { OperatorOptions } from './assembly.ts';
import { OPERATOR_TABLE, operatorCommand, operatorOptions } from './command.ts';
import { hostPort, logLevel } from './flag-parsers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Parses `argv` with `env` in place of the AIOPS_ variables; returns the options. */
async function parse(argv: readonly string[], env: Record<string, string> = {}): Promise<OperatorOptions> {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env))
    if (k.startsWith('AIOPS_')) Reflect.deleteProperty(process.env, k);
  Object.assign(process.env, env);
  try {
    const cmd = operatorCommand();
    cmd.configureOutput({ writeErr: () => undefined });
    await cmd.parseAsync([...argv], { from: 'user' });
    return operatorOptions(OPERATOR_TABLE.values(cmd));
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) Reflect.deleteProperty(process.env, k);
    Object.assign(process.env, saved);
  }
}

/** The levels `log` writes (to stdout, captured here) when asked to log one line at each. */
function levelsWritten(log: Logger): string[] {
  const lines: string[] = [];
  const write = mock.method(process.stdout, 'write', (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
  } finally {
    write.mock.restore();
  }
  return lines.map((l) => (JSON.parse(l) as { level: string }).level);
}

void describe('operator settings', () => {
  void test('every setting comes from its AIOPS_ variable; a flag wins over it', async () => {
    const o = await parse([], {
      AIOPS_PROMETHEUS_URL: 'http://prom:9090',
      AIOPS_LLM_ENDPOINT_ALLOWLIST: 'llm.example.com,127.0.0.1',
      AIOPS_LLM_DEFAULT_MODEL: 'o4-mini',
      AIOPS_LLM_TEMPERATURE: '0.5',
      AIOPS_MAX_CONCURRENT_RECONCILES: '4',
      AIOPS_LEADER_ELECT: 'true',
      AIOPS_LEASE_DURATION: '30s',
    });
    assert.equal(o.prometheusUrl, 'http://prom:9090');
    assert.equal(o.llm.allowlist.length, 2);
    assert.equal(o.llm.defaultModel, 'o4-mini');
    assert.equal(o.llm.temperature, 0.5);
    assert.equal(o.maxConcurrentReconciles, 4);
    assert.equal(o.leaderElect, true);
    assert.equal(o.leaseDurationMs, 30_000);
    const goDurations = await parse([
      '--lease-duration=1m30s',
      '--retry-period=1.5s',
      '--llm-circuit-cooloff=1h',
    ]);
    assert.equal(goDurations.leaseDurationMs, 90_000, 'Go durations, as controller-runtime flags take them');
    assert.equal(goDurations.retryPeriodMs, 1500);
    assert.equal(goDurations.llm.circuitCoolOffMs, 3_600_000);
    const flagged = await parse(['--prometheus-url=http://other:9090', '--max-concurrent-reconciles', '2'], {
      AIOPS_PROMETHEUS_URL: 'http://prom:9090',
      AIOPS_MAX_CONCURRENT_RECONCILES: '4',
    });
    assert.equal(flagged.prometheusUrl, 'http://other:9090');
    assert.equal(flagged.maxConcurrentReconciles, 2);
  });

  void test('defaults: no temperature, 200 completion tokens, the key read from AIOPS_LLM_API_KEY', async () => {
    const o = await parse([]);
    assert.equal(o.llm.temperature, undefined);
    assert.equal(o.llm.maxCompletionTokens, 200);
    assert.equal(o.llm.apiKeyEnv, 'AIOPS_LLM_API_KEY');
    assert.equal(o.leaderElect, false);
    assert.equal(o.prometheusUrl, undefined, 'no Prometheus URL unless one is set');
    assert.equal((await parse([], { AIOPS_PROMETHEUS_URL: '' })).prometheusUrl, undefined, 'empty is none');
  });

  void test('switches: bare flag on, =false off, and the variable "false" off', async () => {
    assert.equal((await parse(['--leader-elect'])).leaderElect, true);
    assert.equal((await parse(['--leader-elect=false'])).leaderElect, false);
    assert.equal((await parse([], { AIOPS_LEADER_ELECT: 'false' })).leaderElect, false);
    assert.equal((await parse([], { AIOPS_ALLOW_CROSS_NAMESPACE: '1' })).allowCrossNamespace, true);
    await assert.rejects(parse([], { AIOPS_LEADER_ELECT: 'maybe' }), /expected true or false/);
  });

  void test('tenant boundary settings: query confinement on by default, the per-namespace share, the label selector', async () => {
    const o = await parse([]);
    assert.equal(o.confineQueries, true);
    assert.equal(o.maxConcurrentRemediationsPerNamespace, 5);
    assert.equal(o.watchLabelSelector, undefined);
    assert.equal((await parse(['--confine-queries=false'])).confineQueries, false);
    assert.equal((await parse([], { AIOPS_CONFINE_QUERIES: 'false' })).confineQueries, false);
    const env = await parse([], {
      AIOPS_MAX_CONCURRENT_REMEDIATIONS_PER_NAMESPACE: '2',
      AIOPS_WATCH_LABEL_SELECTOR: 'shard=a',
    });
    assert.equal(env.maxConcurrentRemediationsPerNamespace, 2);
    assert.equal(env.watchLabelSelector, 'shard=a');
  });

  void test('query cost bounds: 1h and 10s by default, Go durations from flags or the environment, zero refused', async () => {
    assert.deepEqual((await parse([])).queryBounds, { maxRangeMs: 3_600_000, minResolutionMs: 10_000 });
    assert.deepEqual((await parse(['--max-query-range=2h30m', '--min-query-resolution=1m'])).queryBounds, {
      maxRangeMs: 9_000_000,
      minResolutionMs: 60_000,
    });
    const env = await parse([], { AIOPS_MAX_QUERY_RANGE: '15m', AIOPS_MIN_QUERY_RESOLUTION: '30s' });
    assert.deepEqual(env.queryBounds, { maxRangeMs: 900_000, minResolutionMs: 30_000 });
    await assert.rejects(parse(['--max-query-range=0']), /above zero/);
    await assert.rejects(parse(['--min-query-resolution=10']), /expected a duration/);
  });

  void test('controller-runtime names: bind addresses and --zap-log-level', async () => {
    const o = await parse([
      '--metrics-bind-address=127.0.0.1:18080',
      '--health-probe-bind-address',
      ':18081',
    ]);
    assert.equal(o.metricsPort, 18080);
    assert.equal(o.metricsHost, '127.0.0.1');
    assert.equal(o.healthPort, 18081);
    assert.equal(o.healthHost, '0.0.0.0');
    const env = await parse([], { AIOPS_METRICS_BIND_ADDRESS: '[::1]:9000' });
    assert.equal(env.metricsHost, '::1');
    assert.equal(env.metricsPort, 9000);
    await assert.rejects(parse(['--metrics-bind-address=:1', '--metrics-port=2']), /cannot be used with/);
    await assert.rejects(parse(['--metrics-bind-address=0']), /not supported/);
    assert.deepEqual(hostPort(':8080'), { port: 8080 });
    assert.throws(() => hostPort('8080'), /\[host\]:port/);
    assert.equal(logLevel('2'), 'debug');
    assert.equal(logLevel('error'), 'error');
    assert.throws(() => logLevel('loud'), /expected debug/);
    assert.deepEqual(levelsWritten((await parse([])).log), ['info', 'warn', 'error']);
    assert.deepEqual(levelsWritten((await parse(['--zap-log-level=debug'])).log), [
      'debug',
      'info',
      'warn',
      'error',
    ]);
    assert.deepEqual(levelsWritten((await parse(['--zap-log-level=2'])).log), [
      'debug',
      'info',
      'warn',
      'error',
    ]);
    assert.deepEqual(levelsWritten((await parse(['--log-level', 'warn'])).log), ['warn', 'error']);
  });

  void test('--help of the operator process shows both names of each alias and every variable; docs/operator.md names them all', () => {
    const help = execFileSync(process.execPath, ['cmd/operator.ts', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.match(help, /--zap-log-level, --log-level <level>/);
    for (const f of [
      '--metrics-bind-address',
      '--health-probe-bind-address',
      '--metrics-port',
      '--health-port',
    ])
      assert.ok(help.includes(f), f);
    const readme = readFileSync(join(ROOT, 'docs/operator.md'), 'utf8');
    const flags = [...help.matchAll(/^ {2}(?:--[a-z-]+, )?(--[a-z-]+)/gm)].map((m) => m[1] ?? '');
    const envs = [...help.matchAll(/env: (AIOPS_[A-Z_]+)/g)].map((m) => m[1] ?? '');
    assert.ok(flags.length > 30, String(flags.length));
    assert.deepEqual(
      flags.filter((f) => !envs.includes(`AIOPS_${f.slice(2).replaceAll('-', '_').toUpperCase()}`)),
      ['--kubeconfig'],
      'every flag but --kubeconfig (KUBECONFIG) has its AIOPS_ variable',
    );
    for (const name of [...flags, ...envs, '--zap-log-level', 'KUBECONFIG'])
      assert.ok(readme.includes(`\`${name}\``), `docs/operator.md names ${name}`);
  });
});
