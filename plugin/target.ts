// The workload an AITask targets, read with the user's credentials as spec.target says: an
// apps/v1 Deployment or StatefulSet as itself, any other kind found by API discovery and read
// through its /scale subresource (an autoscaling/v1 Scale), as `kubectl scale` and the HPA
// read it. Every command that reads "the target" reads it here, so describe, approve and
// simulate agree on which object is meant and name it the same way.

import { KindDiscovery } from '../lib/kube/discovery.ts';
import { ForbiddenError, NotFoundError } from '../lib/kube/errors.ts';
import { ResourceClient, resourcePath } from '../lib/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import {
  builtinKind,
  targetApiVersion,
  targetGroup,
  targetNamespace,
  targetTypeName,
  type TargetType,
} from '../api/schema/target.ts';
import { CliError } from './errors.ts';
import {
  Resources,
  type DeploymentLike,
  type LiveTarget,
  type ScaleLike,
  type StatefulSetLike,
} from './kinds.ts';
import type { Session } from './session.ts';
import { desiredReplicas } from './target-health.ts';

/**
 * The target's kind is not one the plugin can read: the API server serves no such kind at
 * that apiVersion, or it is cluster-scoped, or it has no /scale subresource. Its message is
 * one line naming the kind and how to check it.
 */
export class TargetKindError extends CliError {
  /** Why, without the target's name: "the API server serves no kind … (check …)". */
  readonly detail: string;
  constructor(ref: string, detail: string) {
    super(`${ref} cannot be read: ${detail}`);
    this.name = 'TargetKindError';
    this.detail = detail;
  }
}

/** `StatefulSet ns/name`, `Shard.example.com ns/name`: how every message names a target. */
export function workloadRef(target: TargetType, namespace: string, name: string): string {
  return `${targetTypeName(target)} ${namespace}/${name}`;
}

/** One discovery table per session, so `describe -A` asks each group-version once. */
const discoveries = new WeakMap<Session, KindDiscovery>();

function discoveryOf(s: Session): KindDiscovery {
  let d = discoveries.get(s);
  if (d === undefined) {
    d = new KindDiscovery(s.transport);
    discoveries.set(s, d);
  }
  return d;
}

/**
 * Reads the `target` named `namespace/name`, once (the transport's own retries aside): a
 * Deployment or StatefulSet with one GET of the object; any other kind with one discovery
 * request for its group-version (kept for the session) and one GET of its /scale. Rejects as
 * the client does: NotFoundError when it does not exist, ForbiddenError when the user may not
 * get it (the apiserver's message names the verb, the resource — `PLURAL/scale` for another
 * kind — and the API group); TargetKindError when the kind is not served, not namespaced or
 * not scalable.
 */
export async function readTarget(
  s: Session,
  target: TargetType,
  namespace: string,
  name: string,
): Promise<LiveTarget> {
  const kind = builtinKind(target);
  if (kind === 'StatefulSet')
    return {
      kind,
      object: await new ResourceClient<StatefulSetLike>(s.transport, Resources.statefulsets).get(
        namespace,
        name,
      ),
    };
  if (kind === 'Deployment')
    return {
      kind,
      object: await new ResourceClient<DeploymentLike>(s.transport, Resources.deployments).get(
        namespace,
        name,
      ),
    };
  const apiVersion = targetApiVersion(target);
  const found = await discoveryOf(s).find(apiVersion, target.kind);
  if (!found.ok) {
    throw new TargetKindError(
      workloadRef(target, namespace, name),
      `${found.message} (check spec.target.apiVersion and kind; list what is served with: kubectl api-resources --api-group=${targetGroup(target) || "''"})`,
    );
  }
  const object = await s.transport.request<ScaleLike>({
    path: resourcePath(found.resource, namespace, name, 'scale'),
  });
  return { kind: 'Scale', type: targetTypeName(target), object };
}

/**
 * The replicas `task`'s target asks for now, read as its kind says in the target's namespace
 * (`task` carries its own namespace). Throws CliError naming the target and `--replicas` when
 * it does not exist, the user may not read it, or its kind is not one that serves /scale.
 */
export async function targetReplicas(s: Session, task: v2.AITask): Promise<number> {
  const ns = targetNamespace(task);
  const { target } = task.spec;
  try {
    return desiredReplicas(await readTarget(s, target, ns, target.name));
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof ForbiddenError || err instanceof TargetKindError)
      throw new CliError(
        `${err instanceof TargetKindError ? err.message : `${workloadRef(target, ns, target.name)} cannot be read (${err.message})`}: pass --replicas N to start from N replicas`,
      );
    throw err;
  }
}
