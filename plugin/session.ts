// The connection a command works through: the kubeconfig/context/namespace resolution
// kubectl would do, the typed AITask client, and lookups that turn the apiserver's 404s
// into messages that say whether the object, its namespace or the whole CRD is missing.

import { AITaskClient } from '../api/aitask-client.ts';
import { NotFoundError } from '../lib/kube/errors.ts';
import type { ConnectionOverrides } from '../lib/kube/overrides.ts';
import { KubeTransport, PLUGIN_USER_AGENT } from '../lib/kube/transport.ts';
import { CRD_NAME, GROUP } from '../api/schema/common.ts';
import type * as v2 from '../api/schema/v2.ts';
import { CliError } from './errors.ts';
import type { GlobalOptions } from './flags.ts';

/** An open connection plus the namespace commands default to. */
export interface Session {
  readonly transport: KubeTransport;
  /** `-n`, else the context's namespace, else `default`. */
  readonly namespace: string;
  readonly tasks: AITaskClient;
}

/**
 * Loads the kubeconfig (`--kubeconfig`, `--context`), applies the connection and
 * impersonation flags over it (`overrides`, as kubectl does) and resolves the namespace. No
 * request is sent.
 */
export async function openSession(
  g: GlobalOptions,
  timeoutMs: number,
  overrides: ConnectionOverrides = {},
): Promise<Session> {
  const transport = await KubeTransport.create({
    ...(g.kubeconfig !== undefined ? { kubeconfig: g.kubeconfig } : {}),
    ...(g.context !== undefined ? { context: g.context } : {}),
    overrides,
    timeoutMs,
    userAgent: PLUGIN_USER_AGENT,
  });
  return {
    transport,
    namespace: g.namespace ?? transport.namespace,
    tasks: new AITaskClient(transport, 'v2'),
  };
}

/** True when the apiserver serves aiops.example.com/v2 (the CRD is installed and established). */
export async function crdServed(s: Session): Promise<boolean> {
  try {
    await s.transport.request({ path: `/apis/${GROUP}/v2` });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/** The error for a cluster without the CRD. */
export function noCrdError(s: Session): CliError {
  return new CliError(
    `the server ${s.transport.server} has no ${CRD_NAME} CRD installed (install the aiops operator, or pick another cluster with --context)`,
  );
}

/** Fails with noCrdError when the CRD is missing; call before listing. */
export async function requireCrd(s: Session): Promise<void> {
  if (!(await crdServed(s))) throw noCrdError(s);
}

/**
 * Reads one AITask at v2. A 404 becomes one line: the CRD is missing, or the object is not
 * in this namespace (naming the namespaces where an AITask of that name does exist).
 */
export async function getTask(s: Session, namespace: string, name: string): Promise<v2.AITask> {
  try {
    return await s.tasks.get(namespace, name);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    if (!(await crdServed(s))) throw noCrdError(s);
    const elsewhere = await s.tasks
      .list(undefined, { fieldSelector: `metadata.name=${name}`, limit: 5 })
      .then((l) => l.items.map((t) => t.metadata.namespace ?? '').filter((n) => n !== namespace))
      .catch(() => []);
    const hint = elsewhere.length
      ? `; it exists in namespace ${elsewhere.map((n) => `"${n}"`).join(', ')}: add -n ${elsewhere[0] ?? ''}`
      : '; list them with: kubectl get aitasks -A';
    throw new CliError(`aitask "${name}" not found in namespace "${namespace}"${hint}`);
  }
}

/** AITasks of one namespace, or of all when `all` (sorted by namespace, then name). */
export async function listTasks(s: Session, namespace: string, all: boolean): Promise<v2.AITask[]> {
  try {
    const list = await s.tasks.listAll(all ? undefined : namespace);
    return list.items.sort((a, b) =>
      `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`.localeCompare(
        `${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`,
      ),
    );
  } catch (err) {
    if (err instanceof NotFoundError && !(await crdServed(s))) throw noCrdError(s);
    throw err;
  }
}
