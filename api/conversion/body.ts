// The part of an AITask that conversion maps: spec and status. Metadata passes through
// untouched (the apiserver forbids changes other than labels and annotations).

/** spec + optional status of one AITask at some version, as loose JSON. */
export interface Body {
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Copies the defined entries of `src` into a new object (drops undefined values). */
export function defined(src: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) if (v !== undefined) out[k] = v;
  return out;
}

/** A Body with `status` only when there is one. */
export function body(spec: Record<string, unknown>, status: Record<string, unknown> | undefined): Body {
  return status === undefined ? { spec } : { spec, status };
}
