// A throwaway CRD for tests that need a kind of their own on the shared apiserver: Widget in
// a group the test names (so no other test is touched), each version keeping any field.

/** A served version whose schema keeps any field. */
export interface ScratchVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: { type: 'object'; 'x-kubernetes-preserve-unknown-fields': true } };
}

/**
 * CRD `widgets.<group>` (kind Widget, namespaced) serving `versions` (default v1), the first
 * one the storage version; no conversion. Spread it to add a conversion or other fields.
 */
export function scratchCRD(group: string, versions: readonly string[] = ['v1']) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: versions.map((name, i): ScratchVersion => ({
        name,
        served: true,
        storage: i === 0,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}
