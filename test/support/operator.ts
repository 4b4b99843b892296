// Runs the operator as a child process (`node cmd/operator.ts`, the deployed entry point) for integration tests, as
// it runs in production: as the shipped install's ServiceAccount with exactly the shipped
// RBAC (operator-identity.ts), any request that RBAC refuses failing the test when the
// operator stops; its JSON log lines collected, its /metrics readable, stopped with SIGTERM
// or killed with SIGKILL; optionally in a memory cgroup of the shipped limit, as in its pod.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import { httpsCall } from './https-call.ts';
import { createMemoryCgroup, type MemoryCgroup } from './memory-cgroup.ts';
import { operatorKubeconfig, refusals } from './operator-identity.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A running operator process. */
export interface OperatorProcess {
  readonly child: ChildProcess;
  readonly metricsPort: number;
  /** Parsed JSON log lines so far. */
  readonly logs: Record<string, unknown>[];
  /** Sum of the samples of metric `name` (all label sets) matching `labels`, from /metrics. */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
  /**
   * SIGTERM and wait for exit; returns the exit code. Under the shipped role, throws when the
   * apiserver refused any of the operator's requests (a rule api/rbac.ts lacks).
   */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit; throws on a refused request, as `stop`. */
  kill(): Promise<void>;
}

/**
 * What every test operator gets unless its test says otherwise: the tests' gauges are
 * synthetic series without a `namespace` label, which query confinement (on by default)
 * would read as no data (operator/tenancy.cluster.test.ts runs with confinement on, on series that
 * carry their namespace); and `metric()` reads plain /metrics (test/attacks/metrics.test.ts
 * runs it over HTTPS behind TokenReview, as shipped).
 */
const TEST_ENV: Readonly<Record<string, string>> = {
  AIOPS_CONFINE_QUERIES: 'false',
  AIOPS_METRICS_SECURE: 'false',
};

/** How startOperatorProcess runs the operator beyond its flags and environment. */
export interface OperatorProcessOptions {
  /**
   * Run with this kubeconfig instead of the shipped role on the shared cluster: the same
   * identity installed on a cluster of the test's own (installOperatorIdentity), a narrower
   * one, or the admin one for a test about what wider rights do (the caller says why).
   */
  readonly kubeconfig?: string;
  /**
   * How `metric()` reads an operator started with `--metrics-secure`: over HTTPS, verifying
   * the serving certificate against `ca` (PEM), with `token` as its bearer token (a scraper
   * bound to the aiops-metrics-reader ClusterRole). Default: plain HTTP.
   */
  readonly metrics?: { readonly token: string; readonly ca: string };
  /** Node options placed before the entry point, e.g. the image's (default: none). */
  readonly nodeArgs?: readonly string[];
  /**
   * Run the operator in a memory cgroup of its own of this many MiB, swap included
   * (memory-cgroup.ts), as a container limit does: Node sizes its heap from it and the
   * kernel OOM-kills the operator past it. The cgroup is removed once the operator exited;
   * `stop` and `kill` throw when it was OOM-killed. Throws when no cgroup can be made.
   * Default: none (the machine's memory).
   */
  readonly memoryLimitMiB?: number;
}

/**
 * The shipped-role kubeconfig with the Role bound where the operator started with `args`
 * and `env` keeps its own objects, as cmd/operator.ts finds them: the Lease in its
 * leader-election namespace (`--leader-election-namespace=`, its variable, POD_NAMESPACE,
 * else the install namespace), the webhook certificate Secret in POD_NAMESPACE or that one.
 */
async function shippedRole(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  const flag = '--leader-election-namespace=';
  const lease =
    args.find((a) => a.startsWith(flag))?.slice(flag.length) ??
    env['AIOPS_LEADER_ELECTION_NAMESPACE'] ??
    env['POD_NAMESPACE'] ??
    DEFAULT_INSTALL.namespace;
  await operatorKubeconfig(env['POD_NAMESPACE'] ?? lease);
  return operatorKubeconfig(lease);
}

/**
 * Starts the operator with `args` (kubeconfig, ports and log level are set here) and `env`
 * added to this process's environment (after TEST_ENV, so a test can override it). It runs
 * as the shipped install's ServiceAccount, the shipped Role bound in its own namespace,
 * unless `options.kubeconfig` says otherwise.
 */
export async function startOperatorProcess(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  options: OperatorProcessOptions = {},
): Promise<OperatorProcess> {
  const fullEnv = { ...process.env, ...TEST_ENV, ...env };
  const kubeconfig = options.kubeconfig ?? (await shippedRole(args, fullEnv));
  const [metricsPort = 0, healthPort = 0] = await freePorts(2);
  const argv = [
    ...(options.nodeArgs ?? []),
    'cmd/operator.ts',
    `--kubeconfig=${kubeconfig}`,
    `--metrics-port=${metricsPort}`,
    `--health-port=${healthPort}`,
    '--bind-address=127.0.0.1',
    ...args,
  ];
  const cgroup: MemoryCgroup | undefined =
    options.memoryLimitMiB === undefined ? undefined : createMemoryCgroup(options.memoryLimitMiB);
  const [command, commandArgs] = cgroup?.wrap(process.execPath, argv) ?? [process.execPath, argv];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: fullEnv,
  });
  const logs: Record<string, unknown>[] = [];
  let buf = '';
  child.stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
      nl = buf.indexOf('\n');
    }
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  /** Set once the operator exited in its cgroup: why, when the kernel OOM-killed it there. */
  let oomKilled: string | undefined;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code))).then(
    async (code) => {
      if (cgroup === undefined) return code;
      if (cgroup.oomKills() > 0)
        oomKilled = `the operator was OOM-killed: it outgrew its ${cgroup.limitMiB} MiB memory cgroup`;
      await cgroup.remove();
      return code;
    },
  );
  /** Throws when the operator was OOM-killed in its memory cgroup. */
  const memoryHeld = (): void => {
    if (oomKilled !== undefined) throw new Error(oomKilled);
  };
  /** Throws with the refused requests when the operator ran as the shipped role and had any. */
  const rbacHeld = (): void => {
    if (options.kubeconfig !== undefined) return;
    const refused = refusals([...logs.map((l) => JSON.stringify(l)), stderr].join('\n'));
    if (refused.length > 0)
      throw new Error(
        `the shipped RBAC (api/rbac.ts) refused ${refused.length} request(s) of the operator:\n${refused.slice(0, 5).join('\n')}`,
      );
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await exited;
      throw new Error(
        `operator exited with ${child.exitCode ?? child.signalCode}${oomKilled === undefined ? '' : ` (${oomKilled})`}: ${stderr}`,
      );
    }
    const ok = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      if (cgroup !== undefined) {
        child.kill('SIGKILL');
        await exited;
      }
      throw new Error(`operator not ready in 120 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    metricsPort,
    logs,
    async metric(name, labels = {}) {
      const secure = options.metrics;
      let text: string;
      if (secure === undefined) text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      else {
        const res = await httpsCall(metricsPort, '/metrics', {
          ca: secure.ca,
          headers: { Authorization: `Bearer ${secure.token}` },
        });
        if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${res.text}`);
        text = res.text;
      }
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
        if (!m || m[1] !== name) continue;
        const ls = m[2] ?? '';
        if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) sum += Number(m[3]);
      }
      return sum;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      memoryHeld();
      rbacHeld();
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      memoryHeld();
      rbacHeld();
    },
  };
}

/** The tests' polling helper (test/harness/wait.ts), here where the tests that start operators find it. */
export { eventually } from '../harness/wait.ts';
