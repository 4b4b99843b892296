// Kubeconfig files for the harness: the admin one handed to tests, kubectl and the operator,
// and one per component (controller-manager, scheduler, kwok). Certificates are embedded as
// base64 data so a kubeconfig stays valid on its own.
import { readFile, writeFile } from 'node:fs/promises';

/** Name used for the cluster, user and context entries of every harness kubeconfig. */
export const KUBECONFIG_NAME = 'aiops-harness';

/** Inputs for one kubeconfig: server URL and PEM file paths. */
export interface KubeconfigSpec {
  readonly server: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const b64 = async (path: string): Promise<string> => (await readFile(path)).toString('base64');

/** Renders a kubeconfig (YAML) with cluster, user and context all named `aiops-harness`. */
export async function renderKubeconfig(spec: KubeconfigSpec): Promise<string> {
  const [ca, cert, key] = await Promise.all([b64(spec.caFile), b64(spec.certFile), b64(spec.keyFile)]);
  const n = KUBECONFIG_NAME;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${n}`,
    '  cluster:',
    `    server: ${spec.server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${n}`,
    '  user:',
    `    client-certificate-data: ${cert}`,
    `    client-key-data: ${key}`,
    'contexts:',
    `- name: ${n}`,
    '  context:',
    `    cluster: ${n}`,
    `    user: ${n}`,
    `current-context: ${n}`,
    '',
  ].join('\n');
}

/** Writes a kubeconfig to `path` with mode 0600 (it holds a private key). */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<void> {
  await writeFile(path, await renderKubeconfig(spec), { mode: 0o600 });
}
