// The Role a test gives a person who may read AITasks and nothing else (get and list in one
// namespace), bound to the subjects the test names: how the plugin's tests show what a user
// without rights to the target or the rest of the cluster sees.

import type { KubeTransport } from '../../lib/kube/transport.ts';

/** One RoleBinding subject: a ServiceAccount, a User or a Group. */
export type Subject =
  | { readonly kind: 'ServiceAccount'; readonly name: string; readonly namespace: string }
  | {
      readonly kind: 'User' | 'Group';
      readonly apiGroup: 'rbac.authorization.k8s.io';
      readonly name: string;
    };

/** Creates Role `aitask-reader` in `ns` (get and list AITasks) and binds it to `subjects`. */
export async function bindAITaskReader(
  admin: KubeTransport,
  ns: string,
  subjects: readonly Subject[],
): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await admin.request({
    method: 'POST',
    path: `${rbac}/namespaces/${ns}/roles`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'aitask-reader' },
      rules: [{ apiGroups: ['aiops.example.com'], resources: ['aitasks'], verbs: ['get', 'list'] }],
    },
  });
  await admin.request({
    method: 'POST',
    path: `${rbac}/namespaces/${ns}/rolebindings`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'aitask-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'aitask-reader' },
      subjects,
    },
  });
}
