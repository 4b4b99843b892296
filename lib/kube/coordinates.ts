// The API coordinates of the built-in kinds the operator and the plugin read and write, in
// one table both rooms take (operator/runtime/kinds.ts and plugin/kinds.ts add the shapes
// each reads). Events have two: the operator writes events.k8s.io/v1 Events (`events`:
// reportingController, note, regarding), and the plugin reads core/v1 Events (`coreEvents`),
// the view that also shows what every other writer recorded; the apiserver serves the same
// objects through both.

import type { ResourceType } from './resources.ts';

const t = (group: string, version: string, plural: string, namespaced = true): ResourceType => ({
  group,
  version,
  plural,
  namespaced,
});

/** Resource coordinates of the built-in kinds, by plural. */
export const Resources = {
  deployments: t('apps', 'v1', 'deployments'),
  statefulsets: t('apps', 'v1', 'statefulsets'),
  controllerRevisions: t('apps', 'v1', 'controllerrevisions'),
  pods: t('', 'v1', 'pods'),
  nodes: t('', 'v1', 'nodes', false),
  leases: t('coordination.k8s.io', 'v1', 'leases'),
  /** events.k8s.io/v1: the Events the operator writes. */
  events: t('events.k8s.io', 'v1', 'events'),
  /** core/v1: every writer's Events (events.k8s.io ones too), as the plugin reads them. */
  coreEvents: t('', 'v1', 'events'),
} as const;
