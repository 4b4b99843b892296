// A custom kind that serves /scale, as a test defines it on the shared apiserver: a CRD in a
// group the test names (so no other test is touched) with the scale subresource
// (spec.replicas, status.replicas, status.selector), the ClusterRole an admin adds so the
// operator may read and write its scale, and the objects of that kind, with the ReplicaSet a
// controller of that kind would make (owned by it, so its pods' controller chain leads to it).

import type { KubeTransport } from '../../lib/kube/transport.ts';
import { NotFoundError, AlreadyExistsError } from '../../lib/kube/errors.ts';
import { eventually } from '../harness/wait.ts';
import { OPERATOR_SERVICE_ACCOUNT } from './operator-identity.ts';

/** One custom kind: its group, kind and plural (namespaced, version v1). */
export interface ScaleKind {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
}

/** `kind`'s apiVersion (`GROUP/v1`). */
export function apiVersionOf(kind: ScaleKind): string {
  return `${kind.group}/v1`;
}

/**
 * Creates `kind`'s CRD (namespaced, v1, the scale subresource reading spec.replicas,
 * status.replicas and status.selector) unless it exists, and waits until it is served.
 */
export async function defineScaleKind(admin: KubeTransport, kind: ScaleKind): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${kind.group}` },
    spec: {
      group: kind.group,
      names: { plural: kind.plural, singular: kind.kind.toLowerCase(), kind: kind.kind },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.selector',
            },
          },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { replicas: { type: 'integer', minimum: 0 } } },
                status: {
                  type: 'object',
                  properties: { replicas: { type: 'integer' }, selector: { type: 'string' } },
                },
              },
            },
          },
        },
      ],
    },
  };
  await admin
    .request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd })
    .catch((err: unknown) => {
      if (!(err instanceof AlreadyExistsError)) throw err;
    });
  await eventually(`${kind.plural}.${kind.group} served`, () =>
    admin.request({ path: `/apis/${kind.group}/v1` }).then(
      (list) =>
        (list as { resources?: { name: string }[] }).resources?.some(
          (r) => r.name === `${kind.plural}/scale`,
        ),
      () => undefined,
    ),
  );
}

/**
 * Grants the operator's ServiceAccount get and update on `kind`'s scale, as an admin does
 * (docs/install.md), and returns the revocation.
 */
export async function grantScale(admin: KubeTransport, kind: ScaleKind): Promise<() => Promise<void>> {
  const name = `aiops-target-${kind.plural}.${kind.group}`;
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await admin.request({
    method: 'POST',
    path: `${rbac}/clusterroles`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: [kind.group], resources: [`${kind.plural}/scale`], verbs: ['get', 'update'] }],
    },
  });
  await admin.request({
    method: 'POST',
    path: `${rbac}/clusterrolebindings`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', ...OPERATOR_SERVICE_ACCOUNT }],
    },
  });
  return async () => {
    for (const path of [`${rbac}/clusterrolebindings/${name}`, `${rbac}/clusterroles/${name}`])
      await admin.request({ method: 'DELETE', path }).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
  };
}

/** An object of `kind` named `name` with `replicas`; its status is written by setScaleStatus. */
export function scaleObject(kind: ScaleKind, name: string, replicas: number) {
  return { apiVersion: apiVersionOf(kind), kind: kind.kind, metadata: { name }, spec: { replicas } };
}

/** The API path of `kind`'s objects in `ns` (and of object `name`). */
export function scaleObjectPath(kind: ScaleKind, ns: string, name?: string): string {
  return `/apis/${kind.group}/v1/namespaces/${ns}/${kind.plural}${name !== undefined ? `/${name}` : ''}`;
}

/** Writes object `name`'s status: `replicas` and the label selector `selector`, as its controller would. */
export async function setScaleStatus(
  admin: KubeTransport,
  kind: ScaleKind,
  ns: string,
  name: string,
  status: { replicas: number; selector: string },
): Promise<void> {
  await admin.request({
    method: 'PATCH',
    path: `${scaleObjectPath(kind, ns, name)}/status`,
    patchType: 'merge',
    body: { status },
  });
}

/**
 * A ReplicaSet of `replicas` pods labelled app=`app`, controlled by the object `owner` (its
 * kind, name and UID), as a controller of that kind makes one; the pods' chain is then
 * pod → ReplicaSet → owner.
 */
export function ownedReplicaSet(
  name: string,
  app: string,
  replicas: number,
  owner: { apiVersion: string; kind: string; name: string; uid: string },
) {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      labels: { app },
      ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: false }],
    },
    spec: {
      replicas,
      selector: { matchLabels: { app, set: name } },
      template: {
        metadata: { labels: { app, set: name } },
        spec: { containers: [{ name: 'app', image: 'registry.example.com/demo/app:1.0' }] },
      },
    },
  };
}
