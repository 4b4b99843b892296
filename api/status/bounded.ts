// The one place the operator's v2 status is fitted to the CRD's bounds before it is
// written (operator/reconcile.ts and operator/mark-sweep.ts call it at their status
// writes): every string cut to its maxLength, every list to its maxItems, so the apiserver
// never refuses the operator's own write with 422, whatever the status quotes or a tenant
// left in it. Over the conditions cap, the operator's own condition types are kept first.

import { clampToSchema } from '../schema/clamp.ts';
import { CONDITIONS_MAX_ITEMS } from '../schema/common.ts';
import * as v2 from '../schema/v2.ts';
import { ConditionType } from './conditions.ts';

const OWN_TYPES: ReadonlySet<string> = new Set(Object.values(ConditionType));

/**
 * `status` within the v2 status schema's bounds (api/schema/clamp.ts): cut strings end
 * with an ellipsis (those with a pattern are cut without one), lists keep their first
 * entries. When there are more than CONDITIONS_MAX_ITEMS conditions, those of the
 * operator's own types (ConditionType) come first, in their order, then the others.
 * Returns a new object; `status` is not changed.
 */
export function boundStatus(status: v2.Status): v2.Status {
  const conditions = status.conditions;
  const ordered =
    conditions !== undefined && conditions.length > CONDITIONS_MAX_ITEMS
      ? {
          ...status,
          conditions: [
            ...conditions.filter((c) => OWN_TYPES.has(c.type)),
            ...conditions.filter((c) => !OWN_TYPES.has(c.type)),
          ],
        }
      : status;
  return clampToSchema(v2.statusSchema, ordered);
}
