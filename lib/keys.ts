// Object keys as the informers and the work queue write them: `namespace/name`, or `name`
// for a cluster-scoped object. Every room that reads a key back reads it here, so there is
// one rule for a key without a slash.

/** The namespace of a `namespace/name` key; '' for a key without a slash (cluster-scoped). */
export function namespaceOf(key: string): string {
  return key.slice(0, Math.max(0, key.indexOf('/')));
}
