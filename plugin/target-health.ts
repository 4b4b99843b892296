// The health of an AITask's target as `kubectl aiops describe` shows it, for each kind it may
// be: a Deployment's replica counts and conditions; a StatefulSet's ready, current and updated
// replicas and its rollout state, judged as `kubectl rollout status statefulset` judges it;
// any other kind's desired and current replicas and selector, as its /scale says (a Scale
// carries no readiness and no rollout, so neither is claimed). Pure: the target is read by
// plugin/target.ts.

import type { DeploymentLike, LiveTarget, ScaleLike, StatefulSetLike } from './kinds.ts';

/** Where a StatefulSet's rollout stands: `unknown` under the OnDelete strategy, which has none to track. */
export type RolloutState = 'complete' | 'progressing' | 'unknown';

/** A StatefulSet's rollout: its state and the one line that says why. */
export interface Rollout {
  state: RolloutState;
  message: string;
}

/** Health of the target as read now; `found: false` when it is absent or not readable. */
export type TargetHealth =
  | {
      found: true;
      kind: 'Deployment';
      desired: number;
      ready: number;
      updated: number;
      available: number;
      conditions: string[];
    }
  | {
      found: true;
      kind: 'StatefulSet';
      desired: number;
      ready: number;
      current: number;
      updated: number;
      available: number;
      generation?: number;
      observedGeneration?: number;
      currentRevision?: string;
      updateRevision?: string;
      rollout: Rollout;
    }
  | {
      found: true;
      /** Read through the /scale subresource; `type` names the kind ("Shard.example.com"). */
      kind: 'Scale';
      type: string;
      desired: number;
      current: number;
      selector?: string;
      rollout: Rollout;
    }
  | { found: false; error?: string };

/** The replicas `target` asks for: spec.replicas, else 1 for a Deployment or StatefulSet (the apiserver's default) and 0 for a Scale (which omits 0). */
export function desiredReplicas(target: LiveTarget): number {
  return target.object.spec?.replicas ?? (target.kind === 'Scale' ? 0 : 1);
}

/** A Deployment's replica counts (spec.replicas defaults to 1) and conditions. */
export function deploymentHealth(d: DeploymentLike): TargetHealth {
  const s = d.status ?? {};
  return {
    found: true,
    kind: 'Deployment',
    desired: d.spec?.replicas ?? 1,
    ready: s.readyReplicas ?? 0,
    updated: s.updatedReplicas ?? 0,
    available: s.availableReplicas ?? 0,
    conditions: (s.conditions ?? []).map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`),
  };
}

/**
 * Where `sts`'s rollout stands, in kubectl's order: not tracked under OnDelete; progressing
 * while the controller has not observed the current generation, then while fewer pods are
 * ready than desired; with a partition above 0, complete once the pods at or above it are
 * updated; otherwise complete once currentRevision has caught up with updateRevision (the
 * controller moves it when every pod is updated and ready).
 */
export function statefulSetRollout(sts: StatefulSetLike): Rollout {
  const spec = sts.spec ?? {};
  const s = sts.status ?? {};
  const strategy = spec.updateStrategy?.type ?? 'RollingUpdate';
  if (strategy !== 'RollingUpdate')
    return { state: 'unknown', message: `not tracked: the ${strategy} update strategy has no rollout` };
  const generation = sts.metadata?.generation;
  const observed = s.observedGeneration;
  if (observed === undefined || observed === 0 || (generation !== undefined && generation > observed))
    return {
      state: 'progressing',
      message: `waiting for the controller to observe generation ${generation ?? '?'} (observed ${observed ?? 'none'})`,
    };
  const desired = spec.replicas ?? 1;
  const ready = s.readyReplicas ?? 0;
  if (ready < desired)
    return { state: 'progressing', message: `waiting for ${desired - ready} of ${desired} pods to be ready` };
  const updated = s.updatedReplicas ?? 0;
  const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    const want = Math.max(0, desired - partition);
    return updated < want
      ? {
          state: 'progressing',
          message: `partitioned rollout (partition ${partition}): ${updated} of ${want} pods updated`,
        }
      : {
          state: 'complete',
          message: `partitioned rollout complete (partition ${partition}): ${updated} pods updated`,
        };
  }
  const revision = s.updateRevision ?? '?';
  if (s.currentRevision !== s.updateRevision)
    return {
      state: 'progressing',
      message: `rolling update: ${updated} of ${desired} pods at revision ${revision}`,
    };
  return { state: 'complete', message: `${s.currentReplicas ?? 0} pods at revision ${revision}` };
}

/** A StatefulSet's replica counts (spec.replicas defaults to 1), generations, revisions and rollout. */
export function statefulSetHealth(sts: StatefulSetLike): TargetHealth {
  const s = sts.status ?? {};
  const health: Extract<TargetHealth, { kind: 'StatefulSet' }> = {
    found: true,
    kind: 'StatefulSet',
    desired: sts.spec?.replicas ?? 1,
    ready: s.readyReplicas ?? 0,
    current: s.currentReplicas ?? 0,
    updated: s.updatedReplicas ?? 0,
    available: s.availableReplicas ?? 0,
    rollout: statefulSetRollout(sts),
  };
  const generation = sts.metadata?.generation;
  if (generation !== undefined) health.generation = generation;
  if (s.observedGeneration !== undefined) health.observedGeneration = s.observedGeneration;
  if (s.currentRevision !== undefined) health.currentRevision = s.currentRevision;
  if (s.updateRevision !== undefined) health.updateRevision = s.updateRevision;
  return health;
}

/**
 * A kind read through /scale (`type` as targetTypeName names it): spec.replicas (0 when
 * omitted), status.replicas and status.selector; its rollout `unknown`, as `kubectl rollout
 * status` has no status viewer for such a kind.
 */
export function scaleHealth(type: string, scale: ScaleLike): TargetHealth {
  const selector = scale.status?.selector;
  return {
    found: true,
    kind: 'Scale',
    type,
    desired: scale.spec?.replicas ?? 0,
    current: scale.status?.replicas ?? 0,
    ...(selector !== undefined && selector !== '' ? { selector } : {}),
    rollout: {
      state: 'unknown',
      message: `not tracked for ${type}: its /scale says how many replicas, not whether they are ready or updated`,
    },
  };
}

/** The health of `target`, by its kind. */
export function targetHealth(target: LiveTarget): TargetHealth {
  if (target.kind === 'Scale') return scaleHealth(target.type, target.object);
  return target.kind === 'StatefulSet' ? statefulSetHealth(target.object) : deploymentHealth(target.object);
}
