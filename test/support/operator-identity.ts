// The identity every test operator runs with: the ServiceAccount of the shipped install,
// holding exactly the ClusterRole and Role that deploy/ and the CSV grant (api/rbac.ts's
// OPERATOR_CLUSTER_RULES and OPERATOR_NAMESPACE_RULES, imported, never copied), so a call
// the shipped RBAC does not allow fails a test with Forbidden instead of an install. What the install does as admin (the CRD, the operator namespace, the ServiceAccount
// and its bindings) is done here as admin too; the operator only gets a token.

import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_INSTALL } from '../../api/install.ts';
import { LEADER_LEASE_NAME } from '../../lib/lease-liveness.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import { OPERATOR_CLUSTER_RULES, OPERATOR_NAMESPACE_RULES } from '../../api/rbac.ts';
import { GROUP, PLURAL } from '../../api/schema/common.ts';
import { fromYaml } from '../../lib/yaml.ts';
import { testTransport } from './cluster.ts';

/** Env var the runner sets to the shipped-role kubeconfig of the shared cluster (environment.ts). */
export const OPERATOR_KUBECONFIG_ENV = 'AIOPS_TEST_OPERATOR_KUBECONFIG';

/** The one Lease name the shipped Role lets the operator read and renew. */
export const OPERATOR_LEASE = LEADER_LEASE_NAME;

/** The ServiceAccount the operator runs as, where the plain install puts it. */
export const OPERATOR_SERVICE_ACCOUNT = {
  namespace: DEFAULT_INSTALL.namespace,
  name: DEFAULT_INSTALL.serviceAccount,
} as const;

/**
 * How long the token is valid: longer than any test run. The harness apiserver sets no
 * --service-account-max-token-expiration, so the request is granted as asked.
 */
const TOKEN_SECONDS = 48 * 3600;

const RBAC = 'rbac.authorization.k8s.io';
const NAME = DEFAULT_INSTALL.deployment;
const SUBJECTS = [{ kind: 'ServiceAccount', ...OPERATOR_SERVICE_ACCOUNT }];

/** The ServiceAccount's user name, as the apiserver authenticates its tokens. */
const USER = `system:serviceaccount:${OPERATOR_SERVICE_ACCOUNT.namespace}:${OPERATOR_SERVICE_ACCOUNT.name}`;

/** One request a SubjectAccessReview asks about. */
interface ResourceAttributes {
  readonly namespace?: string;
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly name?: string;
}

/**
 * Waits until the apiserver's authorizer allows `attrs` to the ServiceAccount (a
 * SubjectAccessReview, polled every 100 ms for up to 60 s): the RBAC authorizer sees a new
 * binding through its informers, a moment after the create returns.
 */
async function allowed(admin: KubeTransport, attrs: ResourceAttributes): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const review = await admin.request<{ status?: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: USER, resourceAttributes: attrs },
      },
    });
    if (review.status?.allowed === true) return;
    if (Date.now() > deadline)
      throw new Error(`${USER} is still not allowed ${JSON.stringify(attrs)} after 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Creates or updates the object at `path` (its URL, name included) to hold exactly
 * `object`'s fields (server-side apply, forced): a cluster that ran with older rules gets
 * today's, and concurrent callers agree.
 */
async function apply(admin: KubeTransport, path: string, object: object): Promise<void> {
  await admin.request({
    method: 'PATCH',
    path,
    patchType: 'apply',
    query: { fieldManager: 'aiops-tests', force: true },
    body: object,
  });
}

/**
 * Binds the shipped Role (OPERATOR_NAMESPACE_RULES: leader election, the webhook
 * certificate Secret) to the operator's ServiceAccount in `namespace`, as the install does in
 * its own namespace, and waits until the apiserver's authorizer honours it. Idempotent.
 */
export async function bindOperatorRole(admin: KubeTransport, namespace: string): Promise<void> {
  const base = `/apis/${RBAC}/v1/namespaces/${namespace}`;
  await apply(admin, `${base}/roles/${NAME}`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'Role',
    metadata: { name: NAME, namespace },
    rules: OPERATOR_NAMESPACE_RULES,
  });
  await apply(admin, `${base}/rolebindings/${NAME}`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name: NAME, namespace },
    roleRef: { apiGroup: RBAC, kind: 'Role', name: NAME },
    subjects: SUBJECTS,
  });
  await allowed(admin, {
    namespace,
    verb: 'get',
    group: 'coordination.k8s.io',
    resource: 'leases',
    name: LEADER_LEASE_NAME,
  });
}

/**
 * As `admin` (a transport of `adminKubeconfig`), does what deploy/aiops-operator.yaml does
 * for the operator's identity: the operator namespace, its ServiceAccount, the ClusterRole
 * and ClusterRoleBinding, the Role and RoleBinding in that namespace. Then issues the
 * ServiceAccount a token (TokenRequest API) and writes `<dir>/operator.kubeconfig`
 * authenticating with it; returns that path. Idempotent.
 */
export async function installOperatorIdentity(
  admin: KubeTransport,
  adminKubeconfig: string,
  dir: string,
): Promise<string> {
  const { namespace, name } = OPERATOR_SERVICE_ACCOUNT;
  await apply(admin, `/api/v1/namespaces/${namespace}`, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  await apply(admin, `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace },
  });
  await apply(admin, `/apis/${RBAC}/v1/clusterroles/${NAME}`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRole',
    metadata: { name: NAME },
    rules: OPERATOR_CLUSTER_RULES,
  });
  await apply(admin, `/apis/${RBAC}/v1/clusterrolebindings/${NAME}`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: NAME },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: NAME },
    subjects: SUBJECTS,
  });
  await allowed(admin, { verb: 'list', group: GROUP, resource: PLURAL });
  await bindOperatorRole(admin, namespace);
  return serviceAccountKubeconfig(admin, adminKubeconfig, namespace, name, join(dir, 'operator.kubeconfig'));
}

/**
 * Issues ServiceAccount `namespace/name` a token through the TokenRequest API (valid
 * `seconds`, default 48 h) and writes to `path` (mode 0600) a kubeconfig for the current
 * cluster of `adminKubeconfig` that authenticates with it, its context in `namespace`.
 * Returns `path`.
 */
export async function serviceAccountKubeconfig(
  admin: KubeTransport,
  adminKubeconfig: string,
  namespace: string,
  name: string,
  path: string,
  seconds = TOKEN_SECONDS,
): Promise<string> {
  const review = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: seconds },
    },
  });
  const kc = fromYaml(readFileSync(adminKubeconfig, 'utf8')) as {
    'current-context'?: string;
    contexts: { name: string; context: { cluster: string } }[];
    clusters: { name: string; cluster: Record<string, unknown> }[];
  };
  const context = kc.contexts.find((c) => c.name === kc['current-context']) ?? kc.contexts[0];
  const cluster = kc.clusters.find((c) => c.name === context?.context.cluster);
  if (!cluster) throw new Error(`${adminKubeconfig} has no current cluster`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cluster', cluster: cluster.cluster }],
    users: [{ name, user: { token: review.status.token } }],
    contexts: [{ name, context: { cluster: 'cluster', user: name, namespace } }],
    'current-context': name,
  };
  await writeFile(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

/**
 * The lines of `output` (log lines, stderr) in which the apiserver refused the operator's
 * ServiceAccount: RBAC's `… is forbidden: User "system:serviceaccount:…" cannot <verb>
 * resource …`, each one a rule the shipped RBAC lacks.
 */
export function refusals(output: string): string[] {
  return output.split('\n').filter((line) => line.includes(USER) && /forbidden/i.test(line));
}

const bound = new Map<string, Promise<void>>();

/**
 * The shipped-role kubeconfig of the shared cluster, with the Role also bound in
 * `namespace` (the operator's own namespace in the test: its leader-election namespace,
 * where the Lease and the webhook certificate Secret live), once per test process.
 */
export async function operatorKubeconfig(namespace: string = DEFAULT_INSTALL.namespace): Promise<string> {
  const path = process.env[OPERATOR_KUBECONFIG_ENV];
  if (path === undefined || path === '') {
    throw new Error(
      `${OPERATOR_KUBECONFIG_ENV} is not set: run integration tests through \`npm test\` (scripts/test.ts)`,
    );
  }
  let binding = bound.get(namespace);
  if (binding === undefined) {
    binding = testTransport().then((admin) => bindOperatorRole(admin, namespace));
    binding.catch(() => bound.delete(namespace));
    bound.set(namespace, binding);
  }
  await binding;
  return path;
}
