// Builds the AITask CustomResourceDefinition from the per-version schemas: the one
// place the CRD is defined. `npm run generate` writes its output to config/crd/, the
// OLM bundle embeds it, and the test harness installs it.

import { CRD_NAME, GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR } from './schema/common.ts';
import type { JSONSchemaProps } from './schema/infer.ts';
import * as v1alpha1 from './schema/v1alpha1.ts';
import * as v1 from './schema/v1.ts';
import * as v2 from './schema/v2.ts';

export type VersionName = 'v1alpha1' | 'v1' | 'v2';

/** Every version of the API, oldest first. */
export const VERSIONS: readonly VersionName[] = ['v1alpha1', 'v1', 'v2'];
/** The version etcd stores and conversions go through. */
export const HUB_VERSION = 'v2' satisfies VersionName;

/** Where the apiserver sends ConversionReviews. */
export type ConversionTarget =
  | { readonly url: string; readonly caBundle?: string }
  | {
      readonly service: { readonly namespace: string; readonly name: string; readonly port?: number };
      readonly caBundle?: string;
    };

export interface CRDOptions {
  /** Versions the CRD lists at all (default: all); older releases lacked the newer ones. */
  readonly versions?: readonly VersionName[];
  /** Versions marked deprecated, with a warning (default: v1alpha1). */
  readonly deprecated?: readonly VersionName[];
  /** Versions to serve (default: all listed). The storage version must be among them. */
  readonly served?: readonly VersionName[];
  /** Storage version (default: v2). */
  readonly storage?: VersionName;
  /** Conversion webhook; omitted means strategy None, only valid when one version is served. */
  readonly conversion?: ConversionTarget;
  /**
   * Default of v1's `spec.namespace` (default: none, so empty means the AITask's own
   * namespace). Only the seed release set one, `"default"`; see api/upgrade/crd-releases.ts.
   */
  readonly v1NamespaceDefault?: string;
}

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** The CRD as a plain object (apiextensions.k8s.io/v1). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: CRDVersion[];
    conversion:
      | { strategy: 'None' }
      | {
          strategy: 'Webhook';
          webhook: {
            conversionReviewVersions: string[];
            clientConfig: {
              url?: string;
              service?: { namespace: string; name: string; path: string; port: number };
              caBundle?: string;
            };
          };
        };
  };
}

export interface CRDVersion {
  name: VersionName;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources: { status: Record<string, never> };
  additionalPrinterColumns: PrinterColumn[];
}

const spec = {
  v1alpha1: { spec: v1alpha1.specSchema, status: v1alpha1.statusSchema },
  v1: { spec: v1.specSchema, status: v1.statusSchema },
  v2: { spec: v2.specSchema, status: v2.statusSchema },
} as const;

const columns: Record<
  VersionName,
  { target: string; threshold: string; thresholdType: 'integer' | 'number'; action: string }
> = {
  v1alpha1: {
    target: '.spec.target',
    threshold: '.spec.threshold',
    thresholdType: 'integer',
    action: '.spec.action',
  },
  v1: {
    target: '.spec.targetDeployment',
    threshold: '.spec.threshold',
    thresholdType: 'number',
    action: '.spec.action',
  },
  v2: {
    target: '.spec.target.name',
    threshold: '.spec.trigger.threshold',
    thresholdType: 'number',
    action: '.spec.remediation.action',
  },
};

/** The OpenAPI schema of a whole AITask object at `version`. */
export function objectSchema(version: VersionName): JSONSchemaProps {
  return {
    type: 'object',
    description:
      'AITask turns a runbook step into a control loop: watch a target, decide on a metric, remediate.',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: spec[version].spec,
      status: spec[version].status,
    },
  };
}

function printerColumns(version: VersionName): PrinterColumn[] {
  const c = columns[version];
  return [
    {
      name: 'Target',
      type: 'string',
      jsonPath: c.target,
      description: 'Workload being watched (spec.target.kind says which)',
    },
    { name: 'Threshold', type: c.thresholdType, jsonPath: c.threshold, description: 'Breach threshold' },
    { name: 'Action', type: 'string', jsonPath: c.action, description: 'Remediation on breach' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

/** Builds the AITask CRD. Throws if the options describe an impossible CRD. */
export function buildCRD(options: CRDOptions = {}): CustomResourceDefinition {
  const listed = VERSIONS.filter((v) => (options.versions ?? VERSIONS).includes(v));
  const served = options.served ?? listed;
  const deprecated = options.deprecated ?? ['v1alpha1'];
  const storage = options.storage ?? HUB_VERSION;
  if (!served.includes(storage)) throw new Error(`storage version ${storage} must be served`);
  if (!options.conversion && served.length > 1) {
    throw new Error('serving more than one version needs a conversion webhook');
  }
  if (!listed.includes(storage)) throw new Error(`storage version ${storage} must be listed`);
  const versions = listed.map((name): CRDVersion => ({
    name,
    served: served.includes(name),
    storage: name === storage,
    ...(deprecated.includes(name)
      ? {
          deprecated: true,
          deprecationWarning: `${GROUP}/${name} AITask is deprecated; use ${GROUP}/${HUB_VERSION} (kubectl aiops migrate-storage moves stored objects)`,
        }
      : {}),
    schema: {
      openAPIV3Schema:
        name === 'v1' && options.v1NamespaceDefault !== undefined
          ? withV1NamespaceDefault(objectSchema(name), options.v1NamespaceDefault)
          : objectSchema(name),
    },
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns(name),
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME, labels: { 'app.kubernetes.io/part-of': 'aiops' } },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [...SHORT_NAMES],
        categories: ['aiops'],
      },
      scope: 'Namespaced',
      versions,
      conversion: options.conversion ? webhookConversion(options.conversion) : { strategy: 'None' },
    },
  };
}

function withV1NamespaceDefault(schema: JSONSchemaProps, value: string): JSONSchemaProps {
  const spec = schema.properties?.['spec'];
  const namespace = spec?.properties?.['namespace'];
  if (spec === undefined || namespace === undefined) throw new Error('v1 schema has no spec.namespace');
  return {
    ...schema,
    properties: {
      ...schema.properties,
      spec: { ...spec, properties: { ...spec.properties, namespace: { ...namespace, default: value } } },
    },
  };
}

function webhookConversion(target: ConversionTarget): CustomResourceDefinition['spec']['conversion'] {
  const caBundle = target.caBundle !== undefined ? { caBundle: target.caBundle } : {};
  const clientConfig =
    'url' in target
      ? { url: target.url, ...caBundle }
      : {
          service: {
            namespace: target.service.namespace,
            name: target.service.name,
            path: '/convert',
            port: target.service.port ?? 443,
          },
          ...caBundle,
        };
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } };
}
