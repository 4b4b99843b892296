// AITasks as large as a tenant can make them, for the attacks on the operator's memory: each
// carries an annotation just under the apiserver's 256 KiB limit on all annotations together
// and a status filled to the CRD's bounds (every condition and message at its maximum), which
// etcd still stores: ~1.3 MB an object. Each targets a Deployment that does not exist, so the
// operator reads and refuses it without acting.

import { CONDITIONS_MAX_ITEMS, MESSAGE_MAX_LENGTH } from '../../api/schema/common.ts';
import type * as v2 from '../../api/schema/v2.ts';
import type { Tenant } from './stage.ts';

/** Bytes of each task's annotation: under the apiserver's 256 KiB limit on all annotations of an object. */
export const ANNOTATION_BYTES = 200 * 1024;
/** Creates in flight at once. */
const WIDTH = 4;
const T = '2026-01-01T00:00:00Z';

/** The largest status the CRD accepts that etcd still stores beside ANNOTATION_BYTES: ~1.15 MB. */
export function fullStatus(i: number): v2.Status {
  const text = 'x'.repeat(MESSAGE_MAX_LENGTH);
  return {
    phase: 'Monitoring',
    message: text,
    conditions: Array.from({ length: CONDITIONS_MAX_ITEMS }, (_, c) => ({
      type: `Filler${c}`,
      status: 'True' as const,
      reason: 'Filler',
      message: `${i}${text}`.slice(0, MESSAGE_MAX_LENGTH),
      lastTransitionTime: T,
    })),
  };
}

/**
 * Creates `count` AITasks `full-<i>` in `tenant`'s namespace, each filled to the CRD's bounds
 * (status written through the status subresource, as a tenant who may write it does), WIDTH
 * at a time. Returns the largest size in bytes one of them was stored with.
 */
export async function createFullTasks(tenant: Tenant, count: number): Promise<number> {
  const blob = 'y'.repeat(ANNOTATION_BYTES);
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < count) {
        const i = next++;
        const name = `full-${i}`;
        await tenant.tasks.create(tenant.namespace, {
          apiVersion: 'aiops.example.com/v2',
          kind: 'AITask',
          metadata: { name, annotations: { 'mallory.example.com/blob': blob } },
          spec: {
            target: { kind: 'Deployment', name: `missing-${i}` },
            trigger: { query: 'vector(0)', threshold: 1 },
            remediation: { action: 'Noop' },
            intervalSeconds: 3600,
          },
        });
        // The size as stored by this write: the operator may rewrite the status soon after.
        const stored = await tenant.tasks.patchStatus(tenant.namespace, name, fullStatus(i));
        bytes = Math.max(bytes, Buffer.byteLength(JSON.stringify(stored)));
      }
    }),
  );
  return bytes;
}
