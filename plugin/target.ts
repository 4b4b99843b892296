// The workload an AITask targets, read with the user's credentials as spec.target.kind says
// (a Deployment or a StatefulSet). Every command that reads "the target" reads it here, so
// describe, approve and simulate agree on which object is meant and name it the same way.

import { ForbiddenError, NotFoundError } from '../lib/kube/errors.ts';
import { ResourceClient, type ResourceType } from '../lib/kube/resources.ts';
import type * as v2 from '../api/schema/v2.ts';
import { targetNamespace } from '../api/schema/target.ts';
import { CliError } from './errors.ts';
import { Resources, type DeploymentLike, type LiveTarget, type StatefulSetLike } from './kinds.ts';
import type { Session } from './session.ts';

/** The API coordinates of a target of `kind`. */
export function targetResource(kind: v2.TargetKind): ResourceType {
  return kind === 'StatefulSet' ? Resources.statefulsets : Resources.deployments;
}

/** `StatefulSet ns/name`: how every message names a target. */
export function workloadRef(kind: v2.TargetKind, namespace: string, name: string): string {
  return `${kind} ${namespace}/${name}`;
}

/**
 * Reads the `kind` named `namespace/name`, once (the transport's own retries aside). Rejects
 * as the client does: NotFoundError when it does not exist, ForbiddenError when the user may
 * not get it.
 */
export async function readTarget(
  s: Session,
  kind: v2.TargetKind,
  namespace: string,
  name: string,
): Promise<LiveTarget> {
  if (kind === 'StatefulSet')
    return {
      kind,
      object: await new ResourceClient<StatefulSetLike>(s.transport, targetResource(kind)).get(
        namespace,
        name,
      ),
    };
  return {
    kind,
    object: await new ResourceClient<DeploymentLike>(s.transport, targetResource(kind)).get(namespace, name),
  };
}

/** The replicas `target` asks for: spec.replicas, 1 when unset (the apiserver's default). */
export function desiredReplicas(target: LiveTarget): number {
  return target.object.spec?.replicas ?? 1;
}

/**
 * The replicas `task`'s target asks for now, read as its kind says in the target's namespace
 * (`task` carries its own namespace). Throws CliError naming the target and `--replicas` when
 * it does not exist or the user may not read it.
 */
export async function targetReplicas(s: Session, task: v2.AITask): Promise<number> {
  const ns = targetNamespace(task);
  const { kind, name } = task.spec.target;
  try {
    return desiredReplicas(await readTarget(s, kind, ns, name));
  } catch (err) {
    if (err instanceof NotFoundError || err instanceof ForbiddenError)
      throw new CliError(
        `${workloadRef(kind, ns, name)} cannot be read (${err.message}): pass --replicas N to start from N replicas`,
      );
    throw err;
  }
}
