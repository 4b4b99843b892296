// Installs (creates or updates) a CRD and waits until the apiserver serves it: the
// Established condition, then every served version in discovery — what envtest does.

import type { CustomResourceDefinition } from '../../api/crd.ts';
import { NotFoundError } from '../../lib/kube/errors.ts';
import { CRD_RESOURCE, ResourceClient, retryOnConflict } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';

interface CRDObject extends Omit<CustomResourceDefinition, 'metadata'> {
  metadata: CustomResourceDefinition['metadata'] & { resourceVersion?: string };
  status?: { conditions?: { type: string; status: string }[]; storedVersions?: string[] };
}

/** CRUD client for CustomResourceDefinitions. */
export function crdClient(transport: KubeTransport): ResourceClient<CRDObject> {
  return new ResourceClient<CRDObject>(transport, CRD_RESOURCE);
}

/**
 * Creates `crd` or replaces the existing one (conflict-retried), then polls every 100 ms
 * (up to `timeoutMs`, default 30 000) until it is Established and each served version
 * lists the plural in discovery. Returns the milliseconds it took.
 */
export async function installCRD(
  transport: KubeTransport,
  crd: CustomResourceDefinition,
  timeoutMs = 30_000,
): Promise<number> {
  const started = Date.now();
  const client = crdClient(transport);
  await retryOnConflict(async () => {
    try {
      const current = await client.get(undefined, crd.metadata.name);
      await client.replace(undefined, crd.metadata.name, {
        ...crd,
        metadata: {
          ...crd.metadata,
          ...(current.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        },
      });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      await client.create(undefined, crd);
    }
  });
  const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
  for (;;) {
    const current = await client.get(undefined, crd.metadata.name);
    const established =
      current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    const discovered =
      established &&
      (
        await Promise.all(served.map((v) => hasResource(transport, crd.spec.group, v, crd.spec.names.plural)))
      ).every(Boolean);
    if (discovered) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `CRD ${crd.metadata.name} not served after ${timeoutMs} ms (versions ${served.join(', ')})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function hasResource(
  transport: KubeTransport,
  group: string,
  version: string,
  plural: string,
): Promise<boolean> {
  try {
    const list = await transport.request<{ resources: { name: string }[] }>({
      path: `/apis/${group}/${version}`,
    });
    return list.resources.some((r) => r.name === plural);
  } catch {
    return false;
  }
}
