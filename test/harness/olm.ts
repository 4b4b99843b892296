// OLM (v0) in the harness: OLM's CRDs (applied server-side, as its chart does), namespaces
// `olm` and `operators`, the global OperatorGroup, olm-operator and catalog-operator built
// from Go modules (build-control-plane.sh olm), and the project's inline catalog served by
// `opm serve` behind CatalogSource `aiops-catalog` in `olm` — so the README's Subscription
// works as written. Everything runs on the host against the loopback apiserver. OLM's CRDs
// are waited for by the apiserver's own answer (crds.ts), each until Established.
import { kubectlWith } from './kubectl.ts';
import { allEstablished, appliedCrdNames } from './crds.ts';
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePorts } from '../../scripts/lib/ports.ts';
import type { KubeHttp } from './kube-http.ts';
import type { Component, ComponentSpec } from './process.ts';
import { awaitBuild } from './pending-builds.ts';
import { REQUIRE_REAL_NODE, skipUnlessRequired } from './required.ts';

/** Name and namespace of the CatalogSource the harness creates. */
export const CATALOG_SOURCE = { name: 'aiops-catalog', namespace: 'olm' } as const;
/** Namespace of the global OperatorGroup (AllNamespaces installs go here). */
export const OPERATORS_NAMESPACE = 'operators';

/** `opm serve` without its profiling endpoint, which binds a fixed port (6060) per server. */
const OPM_SERVE_FLAGS = ['--pprof-addr', ''] as const;

/** What startOlm needs from the cluster being started. */
export interface OlmContext {
  readonly binDir: string;
  readonly kubeconfigPath: string;
  readonly api: KubeHttp;
  readonly start: (spec: ComponentSpec) => Component;
  /** Polls `check` until it returns a value, within the startup deadline; the error names `what`. */
  readonly wait: <T>(what: string, check: () => Promise<T | undefined>) => Promise<T>;
  readonly log: (line: string) => void;
  /** File-based catalog directory `opm serve` serves. */
  readonly catalogDir: string;
}

/** What OLM lacks to start from `binDir` (with the command that builds it), or undefined. */
export function olmMissing(binDir: string): string | undefined {
  awaitBuild('olm');
  awaitBuild('opm');
  const missing = ['olm', 'catalog', 'opm', 'olm-crds'].filter((b) => !existsSync(join(binDir, b)));
  return missing.length === 0
    ? undefined
    : `missing ${missing.join(', ')} in ${binDir}: test/harness/build-control-plane.sh olm && test/harness/build-control-plane.sh validators`;
}

/**
 * A test's skip reason when OLM cannot start from `binDir`, or undefined; throws instead when
 * AIOPS_REQUIRE_REAL_NODE is set.
 */
export function olmUnavailable(binDir: string): string | undefined {
  return skipUnlessRequired(REQUIRE_REAL_NODE, olmMissing(binDir));
}

function kubectl(kubeconfig: string, args: readonly string[]): void {
  kubectlWith(kubeconfig)(args);
}

async function create(api: KubeHttp, path: string, body: object): Promise<void> {
  const res = await api.request('POST', path, body);
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`POST ${path}: HTTP ${res.status} ${res.body}`);
}

/** Installs and starts OLM; resolves once the CatalogSource is READY. */
export async function startOlm(ctx: OlmContext): Promise<void> {
  const why = olmMissing(ctx.binDir);
  if (why !== undefined) throw new Error(`cannot start OLM: ${why}`);
  const crds = realpathSync(join(ctx.binDir, 'olm-crds'));
  const applied = kubectlWith(ctx.kubeconfigPath)(['apply', '--server-side', '-o', 'name', '-f', crds]);
  const names = appliedCrdNames(applied);
  if (names.length === 0) throw new Error(`applying ${crds} created no CRD: ${applied}`);
  await ctx.wait(`OLM's ${names.length} CRDs Established (${names.join(', ')})`, () =>
    allEstablished(names, (path) => ctx.api.request('GET', path)),
  );
  for (const ns of ['olm', OPERATORS_NAMESPACE])
    await create(ctx.api, '/api/v1/namespaces', { metadata: { name: ns } });
  await create(ctx.api, `/apis/operators.coreos.com/v1/namespaces/${OPERATORS_NAMESPACE}/operatorgroups`, {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'global-operators', namespace: OPERATORS_NAMESPACE },
    spec: {},
  });
  // olm has no --kubeconfig flag (it reads KUBECONFIG); both bind :8080 for health, the
  // second one's "address already in use" is harmless.
  ctx.start({
    name: 'olm-operator',
    binary: join(ctx.binDir, 'olm'),
    args: ['--namespace', 'olm', '--writeStatusName', ''],
    env: { KUBECONFIG: ctx.kubeconfigPath },
  });
  ctx.start({
    name: 'catalog-operator',
    binary: join(ctx.binDir, 'catalog'),
    args: ['--namespace', 'olm', `--kubeconfig=${ctx.kubeconfigPath}`],
  });
  const [port = 0] = await freePorts(1);
  ctx.start({
    name: 'opm-serve',
    binary: join(ctx.binDir, 'opm'),
    args: ['serve', ctx.catalogDir, '-p', String(port), ...OPM_SERVE_FLAGS],
  });
  await create(
    ctx.api,
    `/apis/operators.coreos.com/v1alpha1/namespaces/${CATALOG_SOURCE.namespace}/catalogsources`,
    {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: CATALOG_SOURCE,
      spec: {
        sourceType: 'grpc',
        address: `127.0.0.1:${port}`,
        displayName: 'aiops (local)',
        publisher: 'aiops project',
      },
    },
  );
  await ctx.wait(`CatalogSource ${CATALOG_SOURCE.name} READY`, async () => {
    const res = await ctx.api.request(
      'GET',
      `/apis/operators.coreos.com/v1alpha1/namespaces/${CATALOG_SOURCE.namespace}/catalogsources/${CATALOG_SOURCE.name}`,
    );
    const cs = JSON.parse(res.body) as { status?: { connectionState?: { lastObservedState?: string } } };
    return cs.status?.connectionState?.lastObservedState === 'READY' ? true : undefined;
  });
}

/** A catalog served by `opm serve` outside the cluster's own processes. */
export interface PublishedCatalog {
  /** gRPC address the CatalogSource now points at. */
  readonly address: string;
  /** Stops the `opm serve` process (SIGTERM, SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/**
 * Publishes a new catalog, the way a new catalog image reaches a cluster: serves `catalogDir`
 * with a second `opm serve` and points CatalogSource olm/aiops-catalog at it, which makes
 * OLM drop its cached view and re-resolve the Subscriptions on it. Resolves once the new
 * server answers on its port. The caller stops the server (the previous one keeps running
 * until then).
 */
export async function publishCatalog(
  binDir: string,
  kubeconfigPath: string,
  catalogDir: string,
): Promise<PublishedCatalog> {
  const [port = 0] = await freePorts(1);
  const child = spawn(join(binDir, 'opm'), ['serve', catalogDir, '-p', String(port), ...OPM_SERVE_FLAGS], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`opm serve ${catalogDir} exited: ${stderr}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`opm serve ${catalogDir} did not listen on :${port} within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const address = `127.0.0.1:${port}`;
  kubectl(kubeconfigPath, [
    'patch',
    'catalogsource',
    CATALOG_SOURCE.name,
    '-n',
    CATALOG_SOURCE.namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { address } }),
  ]);
  return { address, stop };
}
