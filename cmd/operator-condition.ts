// OLM's OperatorCondition for the running operator. On an OLM install the Deployment has
// OPERATOR_CONDITION_NAME (the CSV's name) and OLM grants the operator get/update/patch on
// that OperatorCondition. The operator writes `Upgradeable` into its spec.conditions from
// the AITask CRD's storedVersions (api/olm/upgradeable.ts), so OLM holds the next upgrade
// while a storage migration is needed instead of stranding stored objects. Not on OLM (the
// variable unset): nothing runs.

import type { Logger } from '../api/log.ts';
import { CRD_RESOURCE, ResourceClient, type ResourceType } from '../api/kube/resources.ts';
import type { KubeTransport } from '../api/kube/transport.ts';
import {
  mergeCondition,
  upgradeableCondition,
  type OperatorConditionEntry,
  type StoredVersionsView,
} from '../api/olm/upgradeable.ts';
import { CRD_NAME } from '../api/schema/common.ts';

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
 * Writes `Upgradeable` now and then every `intervalMs` (default 30 000), only when it
 * changed. A failed read or write is logged and retried at the next interval. Returns a
 * function that stops it.
 */
export function reportUpgradeable(opts: {
  readonly transport: KubeTransport;
  readonly ref: OperatorConditionRef;
  readonly log: Logger;
  readonly intervalMs?: number;
}): () => void {
  const crds = new ResourceClient<StoredVersionsView>(opts.transport, CRD_RESOURCE);
  const conditions = new ResourceClient<OperatorCondition>(opts.transport, OPERATOR_CONDITION);
  const { namespace, name } = opts.ref;
  const sync = async (): Promise<void> => {
    const next = upgradeableCondition(await crds.get(undefined, CRD_NAME), new Date().toISOString());
    const current = await conditions.get(namespace, name);
    const merged = mergeCondition(current.spec?.conditions ?? [], next);
    if (merged === undefined) return;
    await conditions.patch(namespace, name, { spec: { conditions: merged } });
    opts.log.info('OperatorCondition updated', {
      operatorCondition: `${namespace}/${name}`,
      upgradeable: next.status,
      reason: next.reason,
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
  const timer = setInterval(tick, opts.intervalMs ?? 30_000);
  timer.unref();
  return () => clearInterval(timer);
}
