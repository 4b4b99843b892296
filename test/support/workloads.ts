// Builders of the plain workloads tests create (kwok turns their pods Running), so every
// test and benchmark asks for "a Deployment (or StatefulSet) of N pods" the same way.

/** The Deployment shape the builders return (assignable to the rooms' own Deployment types). */
export interface DeploymentManifest {
  apiVersion: 'apps/v1';
  kind: 'Deployment';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
  };
}

/** A Deployment of `replicas` pods labelled app=`name`; `podSpec` is merged into the pod spec. */
export function deployment(
  name: string,
  replicas: number,
  podSpec: Record<string, unknown> = {},
): DeploymentManifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.example.com/demo/app:1.0' }], ...podSpec },
      },
    },
  };
}

/** The StatefulSet shape `statefulSet` returns. */
export interface StatefulSetManifest {
  apiVersion: 'apps/v1';
  kind: 'StatefulSet';
  metadata: { name: string; labels?: Record<string, string> };
  spec: DeploymentManifest['spec'] & { serviceName: string };
}

/**
 * A StatefulSet of `replicas` pods labelled app=`name` (pods `name-0` …, created in order, each
 * once the one before is ready), governed by a Service of its name that need not exist;
 * `podSpec` is merged into the pod spec.
 */
export function statefulSet(
  name: string,
  replicas: number,
  podSpec: Record<string, unknown> = {},
): StatefulSetManifest {
  const { spec } = deployment(name, replicas, podSpec);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: { ...spec, serviceName: name },
  };
}
