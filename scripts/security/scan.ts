// Finds, in the source of the programs that run in the cluster (the operator with its hosted
// webhook, the standalone webhook, and what they share in api/), every place where input enters
// a process: a client of a Kubernetes resource, an informer, a list or watch call, a raw
// apiserver request, a listener and an outbound HTTP call; and every handler a cache's changes
// call (scanHandlers). The input-path inventory (inventory.ts) must name each site it finds,
// and the fan-out inventory (inventory-fanout.ts) each handler, so a new path cannot land
// without its budgets nor a handler without its pace. Pure over file texts; reading the tree
// is the caller's.

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

/**
 * The first-level property names of the object literal whose `{` is at `open` in `source`:
 * each top-level comma-separated member's leading name (`add: …`, `add(…) {…}`). Brackets of
 * every kind are balanced and quoted strings skipped, so an arrow body's calls are not names.
 */
function memberNames(source: string, open: number): string[] {
  const members: string[] = [];
  let member = '';
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source.charAt(i);
    if (c === "'" || c === '"' || c === '`') {
      const close = source.indexOf(c, i + 1);
      if (close < 0) break;
      i = close;
      continue;
    }
    if ('([{'.includes(c)) {
      if (depth === 1) member += c;
      depth++;
    } else if (')]}'.includes(c)) {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1) {
      if (c === ',') {
        members.push(member);
        member = '';
      } else member += c;
    }
  }
  members.push(member);
  return members.flatMap((m) => /^\s*(?:async\s+)?(\w+)\s*[:(]/.exec(m)?.[1] ?? []);
}

/**
 * Every cache event handler in `text`, the source of repo path `file`: each event of each
 * `<cache>.on({ … })` registration as `<file>: <cache>.on <event>`, and each `onRefused:`
 * hook given to a cache as `<file>: onRefused`. The fan-out inventory (inventory-fanout.ts)
 * must name each one.
 */
export function scanHandlers(file: string, text: string): string[] {
  const source = withoutComments(text);
  const found = new Set<string>();
  for (const m of source.matchAll(/([\w.#]+)\.on\(\s*\{/g)) {
    const open = m.index + m[0].length - 1;
    for (const event of memberNames(source, open)) found.add(`${file}: ${m[1]}.on ${event}`);
  }
  if (/\bonRefused\s*:/.test(source)) found.add(`${file}: onRefused`);
  return [...found];
}
