// CSV spec/status descriptors and `alm-examples`, derived from the per-version schemas in
// api/ so the console's forms and the examples follow the API as it changes.

import type { JSONSchemaProps } from '../../api/schema/infer.ts';
import type { VersionName } from '../../api/crd.ts';
import { objectSchema } from '../../api/crd.ts';
import { GROUP, KIND } from '../../api/schema/common.ts';

/** A CSV spec or status descriptor. */
export interface Descriptor {
  path: string;
  displayName: string;
  description: string;
  'x-descriptors': string[];
}

const UI = 'urn:alm:descriptor:com.tectonic.ui';

/** `lastExecutionTime` → `Last Execution Time`; `llmEndpoint` → `LLM Endpoint`. */
export function displayName(path: string): string {
  const leaf = path.split('.').at(-1) ?? path;
  return leaf
    .replace(/^llm/, 'LLM')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase());
}

function specXDescriptors(schema: JSONSchemaProps): string[] {
  if (schema.enum) return schema.enum.map((v) => `${UI}:select:${String(v)}`);
  if (schema.type === 'boolean') return [`${UI}:booleanSwitch`];
  if (schema.type === 'integer' || schema.type === 'number') return [`${UI}:number`];
  return [`${UI}:text`];
}

function statusXDescriptors(path: string, schema: JSONSchemaProps): string[] {
  if (path === 'phase') return ['urn:alm:descriptor:io.kubernetes.phase'];
  if (path === 'message') return ['urn:alm:descriptor:io.kubernetes.phase:reason'];
  if (path === 'conditions') return ['urn:alm:descriptor:io.kubernetes.conditions'];
  if (schema.type === 'object') return [`${UI}:fieldGroup:${path}`];
  return ['urn:alm:descriptor:text'];
}

function describe(path: string, schema: JSONSchemaProps, xDescriptors: string[]): Descriptor {
  return {
    path,
    displayName: displayName(path),
    description: schema.description ?? `${displayName(path)} of the task.`,
    'x-descriptors': xDescriptors,
  };
}

/** One descriptor per leaf field of the spec, depth first in schema order; arrays are leaves. */
function specWalk(schema: JSONSchemaProps, prefix: string, out: Descriptor[]): Descriptor[] {
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (child.type === 'object' && child.properties) specWalk(child, path, out);
    else out.push(describe(path, child, specXDescriptors(child)));
  }
  return out;
}

/** Spec and status descriptors of `version`. */
export function descriptors(version: VersionName): {
  specDescriptors: Descriptor[];
  statusDescriptors: Descriptor[];
} {
  const props = objectSchema(version).properties ?? {};
  const spec = props['spec'];
  const status = props['status'];
  if (!spec || !status) throw new Error(`schema of ${version} lacks spec or status`);
  return {
    specDescriptors: specWalk(spec, '', []),
    statusDescriptors: Object.entries(status.properties ?? {}).map(([path, child]) =>
      describe(path, child, statusXDescriptors(path, child)),
    ),
  };
}

/** The same task, "restart a pod of `web` when it runs hot", at every version: the CSV's `alm-examples`. */
export const EXAMPLES: Record<VersionName, Record<string, unknown>> = {
  v1alpha1: {
    apiVersion: `${GROUP}/v1alpha1`,
    kind: KIND,
    metadata: { name: 'web-restart-on-cpu' },
    spec: { target: 'web', threshold: 80, action: 'RestartPod', interval: '1m' },
  },
  v1: {
    apiVersion: `${GROUP}/v1`,
    kind: KIND,
    metadata: { name: 'web-restart-on-cpu' },
    spec: { targetDeployment: 'web', threshold: 0.8, action: 'restart_pod', intervalSeconds: 60 },
  },
  v2: {
    apiVersion: `${GROUP}/v2`,
    kind: KIND,
    metadata: { name: 'web-restart-on-cpu' },
    spec: {
      target: { kind: 'Deployment', name: 'web' },
      trigger: { threshold: 0.8, operator: 'GreaterThan', forSeconds: 120 },
      remediation: { action: 'RestartPod', cooldownSeconds: 300, maxAttempts: 3 },
      intervalSeconds: 60,
      decision: { mode: 'Rules' },
      approval: 'Auto',
    },
  },
};
