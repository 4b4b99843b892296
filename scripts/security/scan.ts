// Finds, in the source of the programs that run in the cluster (the operator with its hosted
// webhook, the standalone webhook, and what they share in api/), every place where input enters
// a process: a client of a Kubernetes resource, an informer, a list or watch call, a raw
// apiserver request, a listener and an outbound HTTP call. The input-path inventory
// (inventory.ts) must name each site it finds, so a new path cannot land without its budgets.
// Pure over file texts; reading the tree is the caller's.

/** What kind of input path a site opens. */
export type SiteKind = 'client' | 'informer' | 'list' | 'watch' | 'request' | 'listener' | 'outbound';

/** One site: `key` is `<file>: <what>`, stable across line moves and edits elsewhere in the file. */
export interface Site {
  readonly kind: SiteKind;
  readonly key: string;
}

/** The folders scanned: what the operator and webhook processes run. Tests are not scanned. */
export const SCANNED_ROOTS = ['api/', 'cmd/', 'operator/', 'conversion-webhook/', 'lib/'] as const;

/** Whether `file` (a repo path) is source the scan reads. */
export function isScanned(file: string): boolean {
  return (
    SCANNED_ROOTS.some((r) => file.startsWith(r)) &&
    file.endsWith('.ts') &&
    !file.endsWith('.test.ts') &&
    !file.endsWith('.d.ts')
  );
}

/** `text` without comments (line and block), strings left as they are. */
export function withoutComments(text: string): string {
  return text.replaceAll(/\/\*[\s\S]*?\*\//g, '').replaceAll(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

const PATTERNS: readonly { kind: SiteKind; re: RegExp; what: (m: RegExpMatchArray) => string }[] = [
  {
    kind: 'client',
    re: /new\s+(ResourceClient|AITaskClient)\s*(?:<[^>(]*>)?\(\s*[\w.#]+\s*,\s*([\w.#'"]+)/g,
    what: (m) => `${m[1] ?? ''}(${m[2] ?? ''})`,
  },
  {
    kind: 'informer',
    re: /new\s+Informer\s*(<[^>(]*>)?\(/g,
    what: (m) => `Informer${(m[1] ?? '<?>').replaceAll(/\s+/g, '')}`,
  },
  {
    kind: 'list',
    re: /([\w.#]+)\.(list|listAll|forEachPage|page)\(\s*[^)\s]/g,
    what: (m) => `${m[1] ?? ''}.${m[2] ?? ''}`,
  },
  { kind: 'watch', re: /([\w.#]+)\.(watch|stream)\(\s*[^)\s]/g, what: (m) => `${m[1] ?? ''}.${m[2] ?? ''}` },
  { kind: 'request', re: /([\w.#]+)\.request\s*(?:<[^>(]*>)?\(\s*\{/g, what: (m) => `${m[1] ?? ''}.request` },
  { kind: 'listener', re: /\b(https?|net|tls)\.createServer\(/g, what: (m) => `${m[1] ?? ''}.createServer` },
  {
    kind: 'outbound',
    re: /(?<![\w.#])(fetch)\(\s*[^)\s]|\b(https?)\.(request|get)\b/g,
    what: (m) => (m[1] !== undefined ? 'fetch' : `${m[2] ?? ''}.${m[3] ?? ''}`),
  },
];

/** Every site in `text`, the source of repo path `file`, each key once. */
export function scanSource(file: string, text: string): Site[] {
  const source = withoutComments(text);
  const seen = new Map<string, Site>();
  for (const p of PATTERNS)
    for (const m of source.matchAll(p.re)) {
      const key = `${file}: ${p.what(m)}`;
      if (!seen.has(key)) seen.set(key, { kind: p.kind, key });
    }
  return [...seen.values()];
}
