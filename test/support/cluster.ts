// What integration tests get from the test runner (scripts/test.ts): the kubeconfig of
// the shared real control plane, with the AITask CRD installed and its conversion
// webhook running. Each test works in namespaces of its own, so files run in parallel.

import { randomBytes } from 'node:crypto';
import { AITaskClient } from '../../api/aitask-client.ts';
import type { VersionName } from '../../api/crd.ts';
import { ResourceClient } from '../../lib/kube/resources.ts';
import { KubeTransport } from '../../lib/kube/transport.ts';

/** Env var the runner sets to the admin kubeconfig of the shared cluster. */
export const KUBECONFIG_ENV = 'AIOPS_TEST_KUBECONFIG';

/** The shared cluster's kubeconfig path; throws with instructions when run outside `npm test`. */
export function testKubeconfig(): string {
  const path = process.env[KUBECONFIG_ENV];
  if (path === undefined || path === '') {
    throw new Error(
      `${KUBECONFIG_ENV} is not set: run integration tests through \`npm test\` (scripts/test.ts)`,
    );
  }
  return path;
}

let transport: Promise<KubeTransport> | undefined;

/** An admin transport to the shared cluster (created once per test process). */
export function testTransport(): Promise<KubeTransport> {
  transport ??= KubeTransport.create({ kubeconfig: testKubeconfig() });
  return transport;
}

/** An AITask client at `version` on the shared cluster. */
export async function testAITasks<V extends VersionName>(version: V): Promise<AITaskClient<V>> {
  return new AITaskClient(await testTransport(), version);
}

interface Namespace {
  metadata: { name: string };
}

/**
 * Creates a namespace named `<prefix>-<random>` and returns its name; pass `t.after`
 * (or any cleanup registrar) to delete it when the test ends.
 */
export async function freshNamespace(
  prefix: string,
  after?: (fn: () => Promise<void>) => void,
): Promise<string> {
  const ns = new ResourceClient<Namespace>(await testTransport(), {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    namespaced: false,
  });
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await ns.create(undefined, { metadata: { name } });
  after?.(async () => {
    await ns.delete(undefined, name).catch(() => undefined);
  });
  return name;
}
