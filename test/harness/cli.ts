// `npm run cluster -- up | down | env | status`: a persistent local control plane for
// developers and for running the operator by hand. `up` starts the harness cluster detached
// (it outlives this command) and records it in a state file; the other subcommands find it
// there. `up --prometheus` also runs a real Prometheus scraping a demo exporter, recorded in
// the same state. Tests do not use this; they call startCluster() and own their cluster.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { attachCluster, MARKER_FILE, startCluster } from './cluster.ts';
import { startLocalPrometheus } from './local-prometheus.ts';
import { olmMissing } from './olm.ts';
import { probe } from './kube-http.ts';
import { BUILD_SCRIPT, defaultBinDir, missingBinaries, persistentClusterDir } from './paths.ts';
import { prometheusEnvLine, readStartRecord } from '../../scripts/lib/start-record.ts';
import { componentLiveness, readState, writeState, type CliState } from './state.ts';

const USAGE = `usage: npm run cluster -- <up [--real-node] [--olm] [--prometheus]|down|env|status>
  up      build the binaries if missing, start the control plane detached, print export KUBECONFIG=...
          --real-node: a real node (containerd + kubelet + kube-proxy; root, Debian packages)
                       instead of the two kwok nodes, so every Pod runs for real
          --olm: also OLM, serving bundle/catalog-inline as CatalogSource olm/aiops-catalog
          --prometheus: also a real Prometheus scraping a demo exporter (npm start's
                       demo_load{namespace="demo",deployment="web"}), on 127.0.0.1:9090, with
                       --real-node on 10.250.0.1:9090 (where the node's Pods reach the host);
                       prints its URL (port: AIOPS_PROMETHEUS_PORT, 0 = a free one)
  down    stop every process recorded in the state file and remove the cluster dir
  env     print export KUBECONFIG=... for the running cluster (exit 1 if none runs), and
          export AIOPS_PROMETHEUS_URL=http://127.0.0.1:PORT while npm start runs on it
  status  list the processes, say whether the cluster runs (exit 0 running, 1 degraded, 3 not running)
env: AIOPS_CACHE (default ~/.cache/aiops), AIOPS_BIN_DIR (default $AIOPS_CACHE/bin),
     AIOPS_CLUSTER_DIR (default $AIOPS_CACHE/cluster)`;

const err = (line: string): void => void process.stderr.write(line + '\n');

/** `export KUBECONFIG=<path>`, single-quoted when the path has shell-special characters. */
function exportLine(path: string): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
  return `export KUBECONFIG=${quoted}`;
}

/** Runs build-control-plane.sh (its output goes to stderr); rejects on a non-zero exit. */
function build(what = 'all'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, what], { stdio: ['ignore', 2, 2] });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${BUILD_SCRIPT} failed (exit ${String(code)})`));
    });
  });
}

/** Running state of the persistent cluster, if every recorded process is alive. */
async function running(dir: string): Promise<Awaited<ReturnType<typeof readState>>> {
  const state = await readState(dir);
  return state && componentLiveness(state).every((c) => c.running) ? state : undefined;
}

/** What `up` was asked for besides the control plane. */
interface UpFlags {
  readonly realNode: boolean;
  readonly olm: boolean;
  readonly prometheus: boolean;
}

/**
 * Starts the Prometheus of `--prometheus` beside the running cluster of `state` and records it
 * in the state file. On failure the cluster keeps running and the error says so.
 */
async function addPrometheus(state: CliState): Promise<void> {
  const p = await startLocalPrometheus({ dir: state.dir, realNode: state.realNode === true, log: err }).catch(
    (e: unknown) => {
      throw new Error(
        `Prometheus did not start: ${e instanceof Error ? e.message : String(e)}\n` +
          '(the cluster runs: `npm run cluster -- up --prometheus` tries again, `npm run cluster -- down` stops it; ' +
          'a port in use: set AIOPS_PROMETHEUS_PORT)',
      );
    },
  );
  const { url, exporterUrl } = p;
  await writeState({
    ...state,
    components: [...state.components, ...p.components],
    prometheus: { url, exporterUrl },
  });
  printPrometheus({ url, exporterUrl });
}

function printPrometheus(p: NonNullable<CliState['prometheus']>): void {
  err(`Prometheus: ${p.url} (the operator's --prometheus-url, or AIOPS_PROMETHEUS_URL)`);
  err(
    `  demo metric demo_load{namespace="demo",deployment="web"}: curl -X POST '${p.exporterUrl}/load?value=0.95'`,
  );
}

async function up(dir: string, flags: UpFlags): Promise<number> {
  const { realNode, olm } = flags;
  const state = await readState(dir);
  if (state) {
    if (componentLiveness(state).every((c) => c.running)) {
      if (realNode && state.realNode !== true)
        throw new Error('a cluster without a real node runs; stop it first: npm run cluster -- down');
      err(`cluster already running (${state.server}, dir ${dir})`);
      if (state.prometheus) printPrometheus(state.prometheus);
      else if (flags.prometheus) await addPrometheus(state);
      process.stdout.write(exportLine(state.kubeconfigPath) + '\n');
      return 0;
    }
    err('found a partly stopped cluster; stopping what is left of it');
    await attachCluster(state).stop();
  }
  const binDir = defaultBinDir();
  if (olm && olmMissing(binDir) !== undefined) {
    err('building OLM and opm from Go modules (missing); this takes minutes');
    await build('olm');
    await build('validators');
  }
  if (missingBinaries(binDir).length > 0) {
    err(
      `building control-plane binaries (missing: ${missingBinaries(binDir).join(', ')}); this takes minutes`,
    );
    await build();
    const still = missingBinaries(binDir);
    if (still.length > 0) throw new Error(`still missing in ${binDir} after the build: ${still.join(', ')}`);
  }
  const abort = new AbortController();
  const interrupt = (sig: NodeJS.Signals): void => {
    err(`${sig}: stopping the half-started cluster`);
    abort.abort(new Error(`interrupted by ${sig}; nothing is left running`));
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, interrupt);
  const cluster = await startCluster({
    dir,
    binDir,
    detached: true,
    keep: true,
    log: err,
    signal: abort.signal,
    realNode,
    olm,
  })
    .catch(async (e: unknown) => {
      if (abort.signal.aborted) {
        await rm(dir, { recursive: true, force: true });
        throw abort.signal.reason as Error;
      }
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n(logs kept in ${join(dir, 'logs')})`);
    })
    .finally(() => {
      for (const s of signals) process.off(s, interrupt);
    });
  await writeState(cluster);
  err(
    `cluster up in ${cluster.startupMs} ms: ${cluster.server}, dir ${dir}; stop it with: npm run cluster -- down`,
  );
  if (flags.prometheus) await addPrometheus(cluster);
  process.stdout.write(exportLine(cluster.kubeconfigPath) + '\n');
  return 0;
}

async function down(dir: string): Promise<number> {
  const state = await readState(dir);
  if (state) {
    await attachCluster(state).stop();
    err(`cluster stopped, ${dir} removed`);
  } else if (existsSync(join(dir, MARKER_FILE))) {
    await rm(dir, { recursive: true, force: true });
    err(`no cluster was running; removed leftover ${dir}`);
  } else err('no cluster is running');
  return 0;
}

async function status(dir: string): Promise<number> {
  const state = await readState(dir);
  if (!state) {
    err(`not running (no state in ${dir})`);
    return 3;
  }
  const live = componentLiveness(state);
  for (const c of live)
    err(`  ${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? 'running' : 'gone'}`);
  const ready = (await probe(`${state.server}/readyz`)) === 200;
  if (live.every((c) => c.running) && ready) {
    err(`running: ${state.server} (since ${state.startedAt}), kubeconfig ${state.kubeconfigPath}`);
    if (state.prometheus) printPrometheus(state.prometheus);
    return 0;
  }
  if (live.some((c) => c.running)) {
    err(
      `degraded: some processes are gone or the apiserver is not ready; try: npm run cluster -- down && npm run cluster -- up`,
    );
    return 1;
  }
  err('not running (all recorded processes are gone); clean up with: npm run cluster -- down');
  return 3;
}

/** Dispatches a subcommand and returns the exit code (2 = usage error). */
export async function main(args: readonly string[]): Promise<number> {
  const dir = persistentClusterDir();
  const flags = args.slice(1);
  const upFlags =
    args[0] === 'up' && flags.every((f) => f === '--real-node' || f === '--olm' || f === '--prometheus');
  switch (args.length === 1 || upFlags ? args[0] : undefined) {
    case 'up':
      return up(dir, {
        realNode: flags.includes('--real-node'),
        olm: flags.includes('--olm'),
        prometheus: flags.includes('--prometheus'),
      });
    case 'down':
      return down(dir);
    case 'status':
      return status(dir);
    case 'env': {
      const state = await running(dir);
      if (!state) {
        err('no cluster is running; start one with: npm run cluster -- up');
        return 1;
      }
      process.stdout.write(exportLine(state.kubeconfigPath) + '\n');
      const started = readStartRecord(dir);
      if (started) process.stdout.write(prometheusEnvLine(started) + '\n');
      return 0;
    }
    default:
      err(USAGE);
      return 2;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      err(`cluster: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
