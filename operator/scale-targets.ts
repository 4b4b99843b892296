// Targets of any kind that serves /scale beyond the cached ones (a custom resource with the
// scale subresource, an Argo Rollout, a ReplicaSet): found by API discovery (the plural of
// `apiVersion` + `kind`, lib/kube/discovery.ts) and read as their /scale subresource shows
// them, which carries what acting needs (the UID, desired and current replicas, the label
// selector) and nothing a tenant can grow but the selector: no informer, one bounded GET per
// reconcile. The operator reads only what an admin granted (get on PLURAL/scale): a 403 is
// the task's refusal naming the missing rule, reported without another request.

import { targetApiVersion, targetKey, targetNamespace, targetTypeName } from '../api/schema/target.ts';
import { ResponseTooLargeError } from '../lib/kube/bounded-read.ts';
import type { KindDiscovery } from '../lib/kube/discovery.ts';
import { ForbiddenError, NotFoundError } from '../lib/kube/errors.ts';
import { resourcePath, type ResourceType } from '../lib/kube/resources.ts';
import type { KubeTransport } from '../lib/kube/transport.ts';
import type { Scale, Workload } from './runtime/kinds.ts';
import { MAX_SELECTOR_BYTES } from './runtime/trim.ts';
import type { TargetLookup, Targeting } from './target-caches.ts';

/**
 * Largest /scale answer read, in bytes: a Scale is a few hundred bytes but for its
 * status.selector, which a custom kind copies from its own status (a tenant's to write).
 */
export const SCALE_MAX_BYTES = 64 * 1024;
/** Timeout of one /scale read, in ms. */
export const SCALE_READ_TIMEOUT_MS = 10_000;

/** The /scale subresource's status, with the selector string apps/v1 and custom kinds fill in. */
type ScaleRead = Scale & { status?: { replicas?: number; selector?: string } };

/** The sentence naming the rule an admin adds for the operator to read `resource`'s scale. */
export function missingScaleGrant(resource: ResourceType): string {
  const group = resource.group === '' ? 'the core API group' : `API group ${resource.group}`;
  return `the operator may not get ${resource.plural}/scale in ${group}; an admin grants it get and update on ${resource.plural}/scale (the Helm value targetKinds, or a ClusterRole bound to its ServiceAccount)`;
}

/** Reads targets of kinds found by discovery, through their /scale subresource. */
export class ScaleTargets {
  readonly #transport: KubeTransport;
  readonly #discovery: KindDiscovery;

  constructor(transport: KubeTransport, discovery: KindDiscovery) {
    this.#transport = transport;
    this.#discovery = discovery;
  }

  /**
   * `task`'s target through its /scale: at most one discovery request per group-version and
   * max age, then one GET of at most SCALE_MAX_BYTES within SCALE_READ_TIMEOUT_MS. Refused
   * (TargetLookup.refused) when the kind is not served, not namespaced, has no /scale, when
   * the operator may not read it (Forbidden: the missing rule named) or its answer is too
   * large; missing when the object is. Rejects on other errors (a retry may fix them).
   */
  async read(task: Targeting): Promise<TargetLookup> {
    const target = task.spec.target;
    const apiVersion = targetApiVersion(target);
    let found;
    try {
      found = await this.#discovery.find(apiVersion, target.kind);
    } catch (err) {
      if (err instanceof ForbiddenError || err instanceof ResponseTooLargeError)
        return {
          refused: { reason: 'DiscoveryFailed', message: `discovery of ${apiVersion}: ${err.message}` },
        };
      throw err;
    }
    if (!found.ok) return { refused: { reason: found.reason, message: found.message } };
    const resource = found.resource;
    const namespace = targetNamespace(task);
    let scale: ScaleRead;
    try {
      scale = await this.#transport.request<ScaleRead>({
        path: resourcePath(resource, namespace, target.name, 'scale'),
        maxResponseBytes: SCALE_MAX_BYTES,
        timeoutMs: SCALE_READ_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof NotFoundError) return {};
      if (err instanceof ForbiddenError)
        return { refused: { reason: 'Forbidden', message: missingScaleGrant(resource) } };
      if (err instanceof ResponseTooLargeError)
        return {
          refused: {
            reason: 'TooLarge',
            message: `the /scale of ${targetTypeName(target)} ${targetKey(task)} is over ${SCALE_MAX_BYTES} bytes`,
          },
        };
      throw err;
    }
    return { workload: workloadOf(scale, apiVersion, target.kind, resource, namespace, target.name) };
  }
}

/** The Workload a Scale shows: its object's identity, replicas and selector (one past MAX_SELECTOR_BYTES: none, so the pods are found by their owners alone). */
export function workloadOf(
  scale: ScaleRead,
  apiVersion: string,
  kind: string,
  resource: ResourceType,
  namespace: string,
  name: string,
): Workload {
  const m = scale.metadata;
  const selector = scale.status?.selector;
  const replicas = scale.spec.replicas;
  const current = scale.status?.replicas;
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace,
      ...(typeof m.uid === 'string' ? { uid: m.uid } : {}),
      ...(typeof m.resourceVersion === 'string' ? { resourceVersion: m.resourceVersion } : {}),
    },
    spec: typeof replicas === 'number' ? { replicas } : {},
    status: {
      ...(typeof current === 'number' ? { replicas: current } : {}),
      ...(typeof selector === 'string' && Buffer.byteLength(selector) <= MAX_SELECTOR_BYTES
        ? { selector }
        : {}),
    },
    scaleResource: resource,
  };
}
