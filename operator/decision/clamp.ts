// Defence in depth for the values a reconcile uses: the apiserver validates a custom
// resource only at the version it is written in, so a value outside the v2 schema's bounds
// can still be stored (an `intervalSeconds: 0` stored through a conversion would have the
// operator reconcile without pause). Every numeric spec field is clamped to the bounds of
// api/schema/v2.ts (read from the schema itself, so the two never drift), a value of the
// wrong type is dropped (the operator default applies) and the requeue delay is bounded, so
// no stored value can make the operator hot-loop. A spec that breaks one of v2's CEL rules
// (brokenRules: a stash restored through another version could store minReplicas above
// maxReplicas) is not clamped into shape: the reconciler refuses to act on it and says why in
// its status. Pure.

import type { JSONSchemaProps } from '../../api/schema/infer.ts';
import { ruleBroken } from '../../api/schema/rules.ts';
import { specSchema } from '../../api/schema/v2.ts';
import type * as v2 from '../../api/schema/v2.ts';

const P = specSchema.properties;

/** Shortest requeue a reconcile asks for: 1 s (even a breach about to have held long enough waits that long). */
export const MIN_REQUEUE_MS = 1000;
/** Longest requeue: 24 h (the longest cooldown or hold the schema allows). */
export const MAX_REQUEUE_MS = 86_400_000;

/** `v` as an integer within [min, max]; undefined when it is not a finite number. */
function clampInt(v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  return Math.min(max, Math.max(min, Math.trunc(v)));
}

/** `obj` with `key` set to `value`, or removed when `value` is undefined. */
function put<T extends object, K extends keyof T>(obj: T, key: K, value: T[K] | undefined): T {
  if (value !== undefined) return { ...obj, [key]: value };
  return Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key)) as T;
}

/**
 * `spec` with every number it carries within the v2 schema's bounds: intervalSeconds
 * 10–3600, trigger.forSeconds 0–86400, remediation.cooldownSeconds 0–86400, maxAttempts
 * 1–100, scale.step 1–1000, scale.minReplicas ≥ 0 and ≤ maxReplicas, scale.maxReplicas ≥ 1,
 * decision.llm.timeoutSeconds 1–120; fractions are truncated, a non-number is dropped (the
 * operator's default applies), a non-number threshold becomes NaN (never a breach).
 */
export function clampSpec(spec: v2.Spec): v2.Spec {
  const num = (s: { minimum: number; maximum?: number }, v: unknown) => clampInt(v, s.minimum, s.maximum);
  const T = P.trigger.properties;
  const R = P.remediation.properties;
  const S = R.scale.properties;
  let trigger = put(spec.trigger, 'forSeconds', num(T.forSeconds, spec.trigger.forSeconds));
  if (typeof trigger.threshold !== 'number') trigger = { ...trigger, threshold: NaN };
  let remediation = put(
    spec.remediation,
    'cooldownSeconds',
    num(R.cooldownSeconds, spec.remediation.cooldownSeconds),
  );
  remediation = put(remediation, 'maxAttempts', num(R.maxAttempts, remediation.maxAttempts));
  if (remediation.scale !== undefined) {
    let scale = put(remediation.scale, 'step', num(S.step, remediation.scale.step));
    scale = put(scale, 'maxReplicas', num(S.maxReplicas, scale.maxReplicas));
    const min = num(S.minReplicas, scale.minReplicas);
    scale = put(
      scale,
      'minReplicas',
      min === undefined ? undefined : Math.min(min, scale.maxReplicas ?? min),
    );
    remediation = { ...remediation, scale };
  }
  let out: v2.Spec = put(
    { ...spec, trigger, remediation },
    'intervalSeconds',
    num(P.intervalSeconds, spec.intervalSeconds),
  );
  const llm = spec.decision?.llm;
  if (spec.decision !== undefined && llm !== undefined) {
    const L = P.decision.properties.llm.properties;
    out = {
      ...out,
      decision: {
        ...spec.decision,
        llm: put(llm, 'timeoutSeconds', num(L.timeoutSeconds, llm.timeoutSeconds)),
      },
    };
  }
  return out;
}

/**
 * The message of each CEL rule of the v2 spec schema (x-kubernetes-validations, checked by
 * api/schema/rules.ts) that `spec` breaks, with the field it is on (`spec.remediation.scale:
 * minReplicas must not exceed maxReplicas`); empty when it keeps them all, as every spec the
 * apiserver accepted at v2 does.
 */
export function brokenRules(spec: unknown): string[] {
  const out: string[] = [];
  const stack: [JSONSchemaProps, unknown, string][] = [[specSchema, spec, 'spec']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [schema, value, path] = next;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    for (const rule of schema['x-kubernetes-validations'] ?? [])
      if (ruleBroken(rule, value)) out.push(`${path}: ${rule.message}`);
    const o = value as Record<string, unknown>;
    for (const [key, child] of Object.entries(schema.properties ?? {}))
      if (Object.hasOwn(o, key)) stack.push([child, o[key], `${path}.${key}`]);
  }
  return out;
}

/** A reconcile's requeue delay within [MIN_REQUEUE_MS, MAX_REQUEUE_MS]; `fallbackMs` when it is not a number. */
export function boundRequeue(ms: number, fallbackMs: number): number {
  const v = Number.isFinite(ms) ? ms : fallbackMs;
  return Math.min(MAX_REQUEUE_MS, Math.max(MIN_REQUEUE_MS, v));
}
