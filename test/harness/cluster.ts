// The real control plane for tests: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok on 127.0.0.1 with free ports (each started again on new ones when
// another process took its port first: port-retry.ts), plus fake Nodes, started in seconds
// from prebuilt binaries (build-control-plane.sh). Used owned by a test process, or detached
// and re-attached by pid from a state file by the `npm run cluster` CLI.
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as specs from './components.ts';
import type { ClusterPorts, ComponentContext } from './components.ts';
import { kubeHttp, probe, type KubeHttp } from './kube-http.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { createNode, nodeName, nodeReady } from './nodes.ts';
import { defaultBinDir, HARNESS_DIR, missingBinaries } from './paths.ts';
import { CATALOG_SOURCE, startOlm } from './olm.ts';
import { CLIENT_IDENTITIES, createPki, readPem, type Pki } from './pki.ts';
import { freePorts } from '../../scripts/lib/ports.ts';
import {
  attachComponent,
  spawnComponent,
  type Component,
  type ComponentRecord,
  type ComponentSpec,
} from './process.ts';
import { listensOn, startOnFreePorts } from './port-retry.ts';
import { waitFor } from './wait.ts';
import { REAL_NODE_NAME } from './real-node/layout.ts';
import { startRealNode, stopRealNode } from './real-node/node.ts';

/** Options of `startCluster`. */
export interface ClusterOptions {
  /** Cluster dir; created (must be absent, empty or an old harness dir). Default: a new dir under the OS tmpdir. */
  readonly dir?: string;
  /** Where the binaries are. Default `$AIOPS_BIN_DIR` or `${AIOPS_CACHE:-~/.cache/aiops}/bin`. */
  readonly binDir?: string;
  /** Keep the dir (logs, certs, etcd data) after `stop()`. Default false. */
  readonly keep?: boolean;
  /** Start processes in their own session, unref'd, so they outlive this process. Default false. */
  readonly detached?: boolean;
  /**
   * Number of fake nodes. Default 2, or 0 with `realNode`: a Pod that tolerates the real
   * node's taint (the README's Subscription, the plain install's patch) would otherwise as
   * soon land on an untainted fake node, where kwok only pretends to run it (the operator
   * then never starts there, and what it serves, conversion included, is missing).
   */
  readonly nodes?: number;
  /**
   * Also start a real node (containerd, runc, CNI, kubelet, kube-proxy; see real-node/):
   * Node `aiops-node`, tainted aiops.example.com/real-node:NoSchedule. Needs root and the
   * Debian packages realNodeMissing() names. Default false.
   */
  readonly realNode?: boolean;
  /** Local images (buildah storage) loaded into the real node's containerd. Default none. */
  readonly images?: readonly string[];
  /**
   * Also run OLM (olm-operator, catalog-operator, their CRDs, the global OperatorGroup) and
   * serve `catalogDir` (default: the project's bundle/catalog-inline) as CatalogSource
   * olm/aiops-catalog. Default false.
   */
  readonly olm?: boolean;
  readonly catalogDir?: string;
  /** Deadline for the whole startup in ms: one a loaded machine meets (a passing start ends as soon as it is ready). Default 180000 (360000 with a real node or OLM). */
  readonly timeoutMs?: number;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
  /** Aborts the startup (e.g. on Ctrl-C): what was started is stopped and the promise rejects. */
  readonly signal?: AbortSignal;
  /**
   * Chooses `count` free ports on 127.0.0.1 for the component `name`, at each attempt to start
   * it (default: scripts/lib/ports.ts freePorts); a test injects ports it holds to show that a
   * taken port is retried.
   */
  readonly choosePorts?: (count: number, name: string) => Promise<number[]>;
}

/** Everything needed to find and stop a cluster later (the CLI's state file). */
export interface ClusterState {
  readonly dir: string;
  readonly binDir: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly ports: ClusterPorts;
  readonly components: readonly ComponentRecord[];
  readonly startedAt: string;
  readonly startupMs: number;
  /** True when the cluster has a real node (its teardown then runs after the processes stop). */
  readonly realNode?: boolean;
}

/** A running harness cluster. */
export interface Cluster extends ClusterState {
  readonly processes: readonly Component[];
  /** Stops every process (clients first, then apiserver, then etcd), waits for exit, removes the dir unless kept. */
  stop(): Promise<void>;
  /**
   * Restarts kube-apiserver with the same binary, flags and port (etcd and the other
   * components keep running): SIGTERM (SIGKILL after 5 s), wait for exit, wait `downMs`
   * (default 0), start it again and resolve once /readyz answers 200 (deadline
   * `timeoutMs`, default 180 000). `processes` then holds the new process. Only for a
   * cluster this process started (`startCluster`); an attached one throws.
   */
  restartApiserver(opts?: { readonly downMs?: number; readonly timeoutMs?: number }): Promise<void>;
}

/** File in a cluster dir that marks it as the harness' own, so it may be deleted. */
export const MARKER_FILE = '.aiops-harness';

async function prepareDir(dir: string | undefined): Promise<string> {
  if (dir === undefined) return mkdtemp(join(tmpdir(), 'aiops-cluster-'));
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    if (!existsSync(join(dir, MARKER_FILE)))
      throw new Error(`${dir} is not empty and not a harness cluster dir`);
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(dir, { recursive: true });
  return dir;
}

async function stopAll(processes: readonly Component[]): Promise<void> {
  const core = new Set(['kube-apiserver', 'etcd']);
  await Promise.all(processes.filter((p) => !core.has(p.name)).map((p) => p.stop()));
  for (const name of ['kube-apiserver', 'etcd'])
    await Promise.all(processes.filter((p) => p.name === name).map((p) => p.stop()));
}

type Restart = Cluster['restartApiserver'];

function makeCluster(
  state: ClusterState,
  processes: readonly Component[],
  keep: boolean,
  restartApiserver: Restart,
): Cluster {
  let stopped: Promise<void> | undefined;
  return {
    ...state,
    processes,
    restartApiserver,
    stop() {
      stopped ??= (async () => {
        await stopAll(processes);
        if (state.realNode === true) await stopRealNode(state.dir);
        if (!keep) await rm(state.dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** Re-creates a `Cluster` handle from a state file's content; `stop()` then works by pid. */
export function attachCluster(state: ClusterState, keep = false): Cluster {
  return makeCluster(state, state.components.map(attachComponent), keep, () =>
    Promise.reject(new Error(`restartApiserver needs the process that started the cluster in ${state.dir}`)),
  );
}

/**
 * The owned cluster's apiserver restart: stops the running kube-apiserver in `processes`,
 * starts `spec` again in its place and waits for /readyz through `pki`'s admin identity.
 */
function apiserverRestarter(
  processes: Component[],
  spec: ComponentSpec,
  logDir: string,
  detached: boolean,
  pki: Pki,
  server: string,
): Restart {
  return async (opts = {}) => {
    const i = processes.findIndex((p) => p.name === spec.name);
    const old = processes[i];
    if (old === undefined) throw new Error('the cluster has no kube-apiserver process');
    await old.stop();
    if ((opts.downMs ?? 0) > 0) await sleep(opts.downMs);
    const started = spawnComponent(spec, logDir, detached);
    processes[i] = started;
    const http = await adminClient(pki, server);
    try {
      await waitFor(
        'kube-apiserver /readyz after restart',
        async () => ok((await http.request('GET', '/readyz')).status),
        { deadline: Date.now() + (opts.timeoutMs ?? 180_000), watch: [started] },
      );
    } finally {
      http.close();
    }
  };
}

async function adminClient(pki: Pki, server: string): Promise<KubeHttp> {
  const admin = pki.clientCert(CLIENT_IDENTITIES.admin);
  const [ca, cert, key] = await Promise.all([readPem(pki.caCert), readPem(admin.cert), readPem(admin.key)]);
  return kubeHttp(server, { ca, cert, key });
}

const ok = (status: number): true | undefined => (status === 200 ? true : undefined);

/**
 * Starts a cluster and resolves once the apiserver is ready, namespace `default` and its
 * ServiceAccount exist, the controller-manager, scheduler and kwok report healthy, and every
 * fake node is Ready. Throws at once if a binary is missing. Polls every 50 ms. A component
 * that exits because another process took its port before it bound it is started again on
 * new ports (port-retry.ts: up to PORT_ATTEMPTS in all); it counts as up only once its own
 * process listens on its ports. On any other failure (a process exits early: message with
 * its log tail; or the deadline passes) everything started is stopped and the dir removed
 * (unless `keep`) before the promise rejects.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const t0 = Date.now();
  let deadline = t0 + (opts.timeoutMs ?? (opts.realNode === true || opts.olm === true ? 360_000 : 180_000));
  const log = opts.log ?? ((): void => undefined);
  const binDir = opts.binDir ?? defaultBinDir();
  const missing = missingBinaries(binDir);
  if (missing.length > 0) {
    throw new Error(
      `missing control-plane binaries in ${binDir}: ${missing.join(', ')}; build them with ` +
        `test/harness/build-control-plane.sh (or: npm run cluster -- up)`,
    );
  }
  const detached = opts.detached ?? false;
  const dir = await prepareDir(opts.dir);
  await writeFile(join(dir, MARKER_FILE), 'created by test/harness/cluster.ts\n');
  const logDir = join(dir, 'logs');
  await mkdir(logDir);
  const processes: Component[] = [];
  const start = (spec: { name: string; binary: string; args: readonly string[] }): Component => {
    const c = spawnComponent(spec, logDir, detached);
    processes.push(c);
    log(`started ${c.name} (pid ${c.pid})`);
    return c;
  };
  const wait = <T>(what: string, check: () => Promise<T | undefined>): Promise<T> =>
    waitFor(what, check, { deadline, watch: processes, signal: opts.signal });
  let http: KubeHttp | undefined;
  let realNodeStarted = false;
  try {
    const choose = opts.choosePorts ?? ((count: number) => freePorts(count));
    // Filled in as each component binds; the spec builders read it through ctx.
    const ports: { -readonly [K in keyof ClusterPorts]: number } = {
      etcd: 0,
      etcdPeer: 0,
      apiserver: 0,
      controllerManager: 0,
      scheduler: 0,
      kwok: 0,
    };
    const core: Component[] = [];
    /** Starts component `name` on `count` ports the harness chooses, ready once `check` passes and it listens on them. */
    const bound = async (
      name: string,
      count: number,
      spec: (p: readonly number[]) => ComponentSpec,
      what: string,
      check: (p: readonly number[]) => Promise<true | undefined>,
    ): Promise<Component> => {
      const { component } = await startOnFreePorts({
        name,
        count,
        logPath: join(logDir, `${name}.log`),
        choose: (n) => choose(n, name),
        spawn: (p) => start(spec(p)),
        ready: async (p, c) => {
          await waitFor(
            what,
            async () => ((await check(p)) && (await listensOn(c.pid, p)) ? true : undefined),
            { deadline, watch: [...core, c], signal: opts.signal },
          );
        },
        forget: (c) => void processes.splice(processes.indexOf(c), 1),
        log,
      });
      return component;
    };
    const kubeconfigDir = join(dir, 'kubeconfigs');
    // etcd needs no certs: it boots while openssl runs.
    const [etcd, pki] = await Promise.all([
      bound(
        'etcd',
        2,
        ([client = 0, peer = 0]) => {
          rmSync(join(dir, 'etcd'), { recursive: true, force: true });
          ports.etcd = client;
          ports.etcdPeer = peer;
          return specs.etcdSpec({ dir, binDir, ports });
        },
        'etcd /health',
        async ([client = 0]) => ok(await probe(`http://127.0.0.1:${client}/health`)),
      ),
      createPkiAndDirs(dir, kubeconfigDir),
    ]);
    core.push(etcd);
    log(`etcd ready after ${Date.now() - t0} ms`);
    const ctx: ComponentContext = {
      dir,
      binDir,
      ports,
      pki,
      kubeconfigs: {
        controllerManager: join(kubeconfigDir, 'kube-controller-manager.kubeconfig'),
        scheduler: join(kubeconfigDir, 'kube-scheduler.kubeconfig'),
        kwok: join(kubeconfigDir, 'kwok.kubeconfig'),
      },
    };
    let apiserverSpec: ComponentSpec | undefined;
    let httpServer = '';
    const apiserverProcess = await bound(
      'kube-apiserver',
      1,
      ([port = 0]) => {
        ports.apiserver = port;
        apiserverSpec = specs.apiserverSpec(ctx);
        return apiserverSpec;
      },
      'kube-apiserver /readyz',
      async ([port = 0]) => {
        const url = `https://127.0.0.1:${port}`;
        if (http === undefined || httpServer !== url) {
          http?.close();
          http = await adminClient(ctx.pki, url);
          httpServer = url;
        }
        return ok((await http.request('GET', '/readyz')).status);
      },
    );
    core.push(apiserverProcess);
    if (apiserverSpec === undefined || http === undefined)
      throw new Error('kube-apiserver started without a spec');
    const server = `https://127.0.0.1:${ports.apiserver}`;
    const api = http;
    const get = async (path: string): Promise<true | undefined> =>
      ok((await api.request('GET', path)).status);
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeKubeconfigs(ctx, server, kubeconfigPath);
    await wait('namespace default', () => get('/api/v1/namespaces/default'));
    log(`kube-apiserver ready at ${server} after ${Date.now() - t0} ms`);
    const health =
      (scheme: string) =>
      async ([port = 0]: readonly number[]): Promise<true | undefined> =>
        ok(await probe(`${scheme}://127.0.0.1:${port}/healthz`));
    const fakeNodes = opts.nodes ?? (opts.realNode === true ? 0 : 2);
    const names = Array.from({ length: fakeNodes }, (_, i) => nodeName(i));
    await Promise.all([
      ...names.map((n) => createNode(api, n)),
      bound(
        'kube-controller-manager',
        1,
        ([port = 0]) => {
          ports.controllerManager = port;
          return specs.controllerManagerSpec(ctx);
        },
        'kube-controller-manager /healthz',
        health('https'),
      ),
      bound(
        'kube-scheduler',
        1,
        ([port = 0]) => {
          ports.scheduler = port;
          return specs.schedulerSpec(ctx);
        },
        'kube-scheduler /healthz',
        health('https'),
      ),
      bound(
        'kwok',
        1,
        ([port = 0]) => {
          ports.kwok = port;
          return specs.kwokSpec(ctx);
        },
        'kwok /healthz',
        health('http'),
      ),
    ]);
    await Promise.all([
      wait('ServiceAccount default/default', () => get('/api/v1/namespaces/default/serviceaccounts/default')),
      ...names.map((n) =>
        wait(`node ${n} Ready`, async () => ((await nodeReady(api, n)) ? true : undefined)),
      ),
    ]);
    if (opts.realNode === true) {
      realNodeStarted = true;
      await startRealNode({
        dir,
        binDir,
        pki: ctx.pki,
        apiserverPort: ports.apiserver,
        api,
        start,
        wait,
        log,
        images: opts.images ?? [],
        // Time spent waiting for another real node to go does not count against startup.
        extendDeadline: (ms) => (deadline += ms),
      });
      log(`real node ${REAL_NODE_NAME} Ready after ${Date.now() - t0} ms`);
    }
    if (opts.olm === true) {
      await startOlm({
        binDir,
        kubeconfigPath,
        api,
        start,
        wait,
        log,
        catalogDir: opts.catalogDir ?? join(HARNESS_DIR, '../../bundle/catalog-inline'),
      });
      log(
        `OLM and CatalogSource ${CATALOG_SOURCE.namespace}/${CATALOG_SOURCE.name} ready after ${Date.now() - t0} ms`,
      );
    }
    const startupMs = Date.now() - t0;
    log(`cluster ready after ${startupMs} ms`);
    const state: ClusterState = {
      dir,
      binDir,
      server,
      kubeconfigPath,
      ports: { ...ports },
      components: processes.map(({ name, pid, binary, logPath }) => ({ name, pid, binary, logPath })),
      startedAt: new Date(t0).toISOString(),
      startupMs,
      ...(opts.realNode === true ? { realNode: true } : {}),
    };
    return makeCluster(
      state,
      processes,
      opts.keep ?? false,
      apiserverRestarter(processes, apiserverSpec, logDir, detached, ctx.pki, server),
    );
  } catch (err) {
    await stopAll(processes);
    if (realNodeStarted) await stopRealNode(dir);
    if (!(opts.keep ?? false)) await rm(dir, { recursive: true, force: true });
    throw err;
  } finally {
    http?.close();
  }
}

async function createPkiAndDirs(dir: string, kubeconfigDir: string): Promise<Pki> {
  await Promise.all(['kcm', 'scheduler', 'apiserver'].map((d) => mkdir(join(dir, d))));
  await mkdir(kubeconfigDir);
  await writeFile(join(dir, 'kwok.yaml'), specs.KWOK_CONFIG);
  return createPki(join(dir, 'pki'));
}

async function writeKubeconfigs(ctx: ComponentContext, server: string, adminPath: string): Promise<void> {
  const forId = (id: (typeof CLIENT_IDENTITIES)[keyof typeof CLIENT_IDENTITIES]) => {
    const { cert, key } = ctx.pki.clientCert(id);
    return { server, caFile: ctx.pki.caCert, certFile: cert, keyFile: key };
  };
  await Promise.all([
    writeKubeconfig(adminPath, forId(CLIENT_IDENTITIES.admin)),
    writeKubeconfig(ctx.kubeconfigs.controllerManager, forId(CLIENT_IDENTITIES.controllerManager)),
    writeKubeconfig(ctx.kubeconfigs.scheduler, forId(CLIENT_IDENTITIES.scheduler)),
    writeKubeconfig(ctx.kubeconfigs.kwok, forId(CLIENT_IDENTITIES.kwok)),
  ]);
}
