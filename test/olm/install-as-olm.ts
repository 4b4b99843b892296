// Grants what the committed CSV asks for the way OLM does at install (the rest of an OLM
// install is tested with a real OLM in test/real-node/): creates the ServiceAccount and
// exactly the CSV's permissions (a Role in the install namespace) and clusterPermissions
// (a ClusterRole), issues the ServiceAccount a token through the TokenRequest API, and
// writes a kubeconfig that authenticates with it, so the operator runs with no more
// access than an OLM install gives it.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import type { PolicyRule } from '../../api/rbac.ts';
import { fromYaml } from '../../lib/yaml.ts';
import { PATHS } from '../../scripts/olm/render.ts';
import { serviceAccountKubeconfig } from '../support/operator-identity.ts';
import { ROOT } from './validators.ts';

interface Permission {
  serviceAccountName: string;
  rules: PolicyRule[];
}

/** The parts of the committed CSV an install reads. */
export interface InstallSpec {
  readonly permissions: Permission[];
  readonly clusterPermissions: Permission[];
}

/** Reads the install strategy's permissions of bundle/'s CSV. */
export function csvInstallSpec(): InstallSpec {
  const csv = fromYaml(
    readFileSync(join(ROOT, PATHS.manifests, 'aiops-operator.clusterserviceversion.yaml'), 'utf8'),
  ) as { spec: { install: { spec: InstallSpec } } };
  const { permissions, clusterPermissions } = csv.spec.install.spec;
  return { permissions, clusterPermissions };
}

const rbac = 'rbac.authorization.k8s.io';

/**
 * Creates the ServiceAccount, Role/RoleBinding and ClusterRole/ClusterRoleBinding of
 * `spec` (rules passed through `edit`, default unchanged) for `namespace`, registers
 * their removal with `after`, and returns a kubeconfig path for the ServiceAccount.
 */
export async function installAsOLM(
  admin: KubeTransport,
  adminKubeconfig: string,
  namespace: string,
  spec: InstallSpec,
  dir: string,
  after: (fn: () => Promise<void>) => void,
  edit: (rules: PolicyRule[]) => PolicyRule[] = (r) => r,
): Promise<string> {
  const [perm] = spec.permissions;
  const [clusterPerm] = spec.clusterPermissions;
  if (!perm || !clusterPerm || perm.serviceAccountName !== clusterPerm.serviceAccountName) {
    throw new Error('the CSV must grant one ServiceAccount both permissions and clusterPermissions');
  }
  const sa = perm.serviceAccountName;
  const name = `${sa}-${randomBytes(3).toString('hex')}`;
  const subjects = [{ kind: 'ServiceAccount', name: sa, namespace }];
  const post = (path: string, body: unknown): Promise<unknown> =>
    admin.request({ method: 'POST', path, body });
  await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: sa } });
  await post(`/apis/${rbac}/v1/namespaces/${namespace}/roles`, {
    metadata: { name },
    rules: edit(perm.rules),
  });
  await post(`/apis/${rbac}/v1/namespaces/${namespace}/rolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: rbac, kind: 'Role', name },
    subjects,
  });
  after(async () => {
    for (const kind of ['clusterrolebindings', 'clusterroles']) {
      await admin
        .request({ method: 'DELETE', path: `/apis/${rbac}/v1/${kind}/${name}` })
        .catch(() => undefined);
    }
  });
  await post(`/apis/${rbac}/v1/clusterroles`, { metadata: { name }, rules: edit(clusterPerm.rules) });
  await post(`/apis/${rbac}/v1/clusterrolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name },
    subjects,
  });
  return serviceAccountKubeconfig(
    admin,
    adminKubeconfig,
    namespace,
    sa,
    join(dir, `${name}.kubeconfig`),
    3600,
  );
}
