// Waiting for CRDs the harness or a test applied, by the apiserver's own answer: each CRD is
// read until its condition Established is True. Not `kubectl wait --for=condition=Established`,
// which exits at once with an error when the apiserver has not written the CRD's conditions
// yet (kubernetes/kubernetes#66439), as happens on a busy machine right after the apply.

/** The CRD names in `kubectl apply -o name` output (lines starting `customresourcedefinition.apiextensions.k8s.io/<name>`). */
export function appliedCrdNames(output: string): string[] {
  const prefix = 'customresourcedefinition.apiextensions.k8s.io/';
  return output
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

/** Whether `crd` (a CustomResourceDefinition as the apiserver returns it) has condition Established=True. */
export function isEstablished(crd: unknown): boolean {
  const conditions = (crd as { status?: { conditions?: unknown } } | null)?.status?.conditions;
  return (
    Array.isArray(conditions) &&
    conditions.some(
      (c: { type?: unknown; status?: unknown }) => c.type === 'Established' && c.status === 'True',
    )
  );
}

/** The apiserver path of the CRD `name`. */
export function crdPath(name: string): string {
  return `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
}

/**
 * True once every CRD in `names` is Established, each read with `get` (a GET of crdPath that
 * resolves with the status and body); undefined while one is not yet (or is not found), for a
 * poll to call again.
 */
export async function allEstablished(
  names: readonly string[],
  get: (path: string) => Promise<{ readonly status: number; readonly body: string }>,
): Promise<true | undefined> {
  for (const name of names) {
    const res = await get(crdPath(name));
    if (res.status !== 200 || !isEstablished(JSON.parse(res.body))) return undefined;
  }
  return true;
}
