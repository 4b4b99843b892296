// Reads what the apiserver really stored: AITask values straight from etcd through its
// JSON gateway (/v3/kv/range), so tests can prove at which version each object is stored.

/** Maps `namespace/name` to the apiVersion each AITask is stored at in etcd. */
export async function storedVersions(
  etcdPort: number,
  prefix = '/registry/aiops.example.com/aitasks/',
): Promise<Map<string, string>> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const res = await fetch(`http://127.0.0.1:${etcdPort}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: b64(prefix), range_end: b64(end) }),
  });
  if (!res.ok) throw new Error(`etcd range failed: HTTP ${res.status}`);
  const body = (await res.json()) as { kvs?: { key: string; value: string }[] };
  const out = new Map<string, string>();
  for (const kv of body.kvs ?? []) {
    const key = Buffer.from(kv.key, 'base64').toString().slice(prefix.length);
    const value = JSON.parse(Buffer.from(kv.value, 'base64').toString()) as { apiVersion: string };
    out.set(key, value.apiVersion);
  }
  return out;
}
