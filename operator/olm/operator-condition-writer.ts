// OLM's OperatorCondition for the running operator. On an OLM install the Deployment has
// OPERATOR_CONDITION_NAME (the CSV's name) and OLM grants the operator get/update/patch on
// that OperatorCondition. The leader writes `Upgradeable` (from the AITask CRD, judged as
// its own release's CRD) and `Available` / `Progressing` / `Degraded` (from its own state)
// into spec.conditions; OLM copies them to status, holds an upgrade while `Upgradeable` is
// False, and shows them to users. The decisions are in operator/olm/operator-condition.ts.
// Not on OLM (the variable unset): nothing runs.

import type { Logger } from '../../lib/log.ts';
import { CRD_RESOURCE, ResourceClient, type ResourceType } from '../../lib/kube/resources.ts';
import type { KubeTransport } from '../../lib/kube/transport.ts';
import {
  healthConditions,
  mergeConditions,
  ownStorageVersion,
  upgradeableCondition,
  type OperatorConditionEntry,
  type OperatorHealth,
  type StoredVersionsView,
} from './operator-condition.ts';
import { CRD_NAME } from '../../api/schema/common.ts';

const OPERATOR_CONDITION: ResourceType = {
  group: 'operators.coreos.com',
  version: 'v2',
  plural: 'operatorconditions',
  namespaced: true,
};

interface OperatorCondition {
  metadata: { name: string; namespace?: string };
  spec?: { conditions?: OperatorConditionEntry[] };
}

/** Where the OperatorCondition is: OLM's variable and the pod's namespace. */
export interface OperatorConditionRef {
  readonly namespace: string;
  readonly name: string;
}

/** The OperatorCondition OLM made for this pod, from OPERATOR_CONDITION_NAME and POD_NAMESPACE; undefined off OLM. */
export function operatorConditionRef(env: NodeJS.ProcessEnv = process.env): OperatorConditionRef | undefined {
  const name = env['OPERATOR_CONDITION_NAME'];
  const namespace = env['POD_NAMESPACE'];
  return name && namespace ? { name, namespace } : undefined;
}

/**
 * Writes the conditions now and then every `intervalMs` (default 10 000) while this replica
 * leads, only what changed (a merge patch of spec.conditions; other writers' types are
 * kept). A standby writes nothing. A failed read or write is logged and retried at the next
 * interval. Returns a function that stops it.
 */
export function reportOperatorCondition(opts: {
  readonly transport: KubeTransport;
  readonly ref: OperatorConditionRef;
  readonly health: () => OperatorHealth;
  readonly log: Logger;
  readonly intervalMs?: number;
}): () => void {
  const crds = new ResourceClient<StoredVersionsView>(opts.transport, CRD_RESOURCE);
  const conditions = new ResourceClient<OperatorCondition>(opts.transport, OPERATOR_CONDITION);
  const { namespace, name } = opts.ref;
  const ownStorage = ownStorageVersion(name);
  const sync = async (): Promise<void> => {
    const health = opts.health();
    if (!health.leading) return;
    const now = new Date().toISOString();
    const upgradeable = upgradeableCondition(await crds.get(undefined, CRD_NAME), ownStorage, now);
    const next = [...(upgradeable ? [upgradeable] : []), ...healthConditions(health, now)];
    const current = await conditions.get(namespace, name);
    const merged = mergeConditions(current.spec?.conditions ?? [], next);
    if (merged === undefined) return;
    await conditions.patch(namespace, name, { spec: { conditions: merged } });
    opts.log.info('OperatorCondition updated', {
      operatorCondition: `${namespace}/${name}`,
      conditions: next.map((c) => `${c.type}=${c.status} (${c.reason})`).join(', '),
    });
  };
  const tick = (): void => {
    sync().catch((err: unknown) =>
      opts.log.warn('OperatorCondition not updated; retrying at the next interval', {
        operatorCondition: `${namespace}/${name}`,
        err: (err as Error).message,
      }),
    );
  };
  tick();
  const timer = setInterval(tick, opts.intervalMs ?? 10_000);
  timer.unref();
  return () => clearInterval(timer);
}
