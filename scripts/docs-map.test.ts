// The folder maps and the newcomer's map name what is in the tree: every path a map names in
// backticks exists (docs/architecture.md's walk of one watch event among them), operator/README.md
// names every module of operator/ in its room's row and no module that is gone, and the README's
// layout table lists every top-level folder. A file renamed, moved or added without its map
// fails here. Tables on made-up text, then the repository's own maps.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** The maps whose named paths must exist: the repo path of each. */
const MAPS = [
  'README.md',
  'docs/architecture.md',
  'operator/README.md',
  'plugin/README.md',
  'test/README.md',
];

/** The text of every `code span` in `markdown`, fenced blocks left out. */
function codeSpans(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '');
}

/**
 * The spans that name a file or folder of the repository: a path with a `/` in it, a file with
 * one of our extensions or a folder ending in `/`; not a pattern (`*`, `{`, `<`), a command, a
 * URL or a place outside the tree (`~`, dist/).
 */
function pathsNamed(spans: readonly string[]): string[] {
  return spans.filter(
    (s) =>
      /^[\w.-]+(\/[\w.-]+)*\/?$/.test(s) &&
      s.includes('/') &&
      (/\.(ts|js|md|sh|json|yaml)$/.test(s) || s.endsWith('/')) &&
      !s.startsWith('dist/') &&
      !s.startsWith('node_modules/'),
  );
}

/** Whether `path`, named in the map at repo path `map`, exists beside the map or from the root. */
const exists = (map: string, path: string): boolean =>
  existsSync(join(root, dirname(map), path)) || existsSync(join(root, path));

/** The cells of each row of the first markdown table after `heading`, header and rule left out. */
function tableRows(markdown: string, heading: string): string[][] {
  const text = `\n${markdown}`;
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return [];
  const lines = text.slice(start + 1).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  if (first < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

test('codeSpans and pathsNamed: a table of made-up text', () => {
  const table: [markdown: string, paths: string[]][] = [
    ['`operator/reconcile.ts` then `lib/`', ['operator/reconcile.ts', 'lib/']],
    ['`reconcile` `Result` `/healthz` `npm test`', []],
    ['`real-node/olm-*.test.ts` `dist/operator/` `~/.cache/aiops`', []],
    ['```\n`api/crd.ts`\n```\n`api/rbac.ts`', ['api/rbac.ts']],
    ['`harness/cli.ts` and `docs/security.md`', ['harness/cli.ts', 'docs/security.md']],
  ];
  for (const [markdown, paths] of table) assert.deepEqual(pathsNamed(codeSpans(markdown)), paths, markdown);
});

test('tableRows: the cells of the table under a heading', () => {
  const md =
    '# x\n\n## Layout\n\ntext\n\n| a | b |\n| - | - |\n| `lib/` | one |\n| `api/` | two |\n\nafter\n';
  assert.deepEqual(tableRows(md, '## Layout'), [
    ['`lib/`', 'one'],
    ['`api/`', 'two'],
  ]);
  assert.deepEqual(tableRows(md, '## Missing'), []);
});

for (const map of MAPS)
  test(`${map}: every path it names exists`, () => {
    const gone = pathsNamed(codeSpans(read(map))).filter((p) => !exists(map, p));
    assert.deepEqual(gone, [], `${map} names paths that are not in the tree`);
  });

test('docs/architecture.md walks one watch event through files that exist', () => {
  const walk = read('docs/architecture.md').split('\n## ')[2] ?? '';
  const files = pathsNamed(codeSpans(walk)).filter((p) => p.endsWith('.ts'));
  assert.ok(files.length >= 8, `the walk names only ${files.length} files`);
  assert.deepEqual(
    files.filter((f) => !existsSync(join(root, f))),
    [],
  );
});

/**
 * Against the rows of a folder map (`where`, `holds`: a room's folder relative to the map's
 * folder, or `top`, and its modules in code spans, `name` or `name.ts`) and the modules of the
 * tree (paths relative to the map's folder): the modules no row of their room names, and the
 * names no module stands behind.
 */
function unmapped(
  rows: readonly string[][],
  modules: readonly string[],
): { missing: string[]; gone: string[] } {
  const named = new Map<string, Set<string>>();
  for (const [where = '', holds = ''] of rows) {
    const room = where.replace(/`/g, '') === 'top' ? '' : where.replace(/`/g, '');
    const names = codeSpans(holds).filter((n) => /^[a-z][a-z0-9-]*(\.ts)?$/.test(n));
    named.set(room, new Set(names.map((n) => n.replace(/\.ts$/, ''))));
  }
  const missing = modules.filter((m) => {
    const slash = m.lastIndexOf('/');
    return !named.get(m.slice(0, slash + 1))?.has(m.slice(slash + 1, -'.ts'.length));
  });
  const gone = [...named].flatMap(([room, names]) =>
    [...names].filter((n) => !modules.includes(`${room}${n}.ts`)).map((n) => `${room}${n}`),
  );
  return { missing, gone };
}

test('unmapped: a table of made-up maps and trees', () => {
  const rows = [
    ['`runtime/`', 'the cache (`informer`), its `Result` (`controller`), `/healthz`'],
    ['top', '`reconcile.ts` (`startOperator`)'],
  ];
  const table: [modules: string[], missing: string[], gone: string[]][] = [
    [['runtime/informer.ts', 'runtime/controller.ts', 'reconcile.ts'], [], []],
    [
      ['runtime/informer.ts', 'runtime/controller.ts', 'reconcile.ts', 'runtime/leader.ts'],
      ['runtime/leader.ts'],
      [],
    ],
    [['runtime/informer.ts', 'reconcile.ts'], [], ['runtime/controller']],
    [['informer.ts', 'runtime/controller.ts', 'reconcile.ts'], ['informer.ts'], ['runtime/informer']],
  ];
  for (const [modules, missing, gone] of table)
    assert.deepEqual(unmapped(rows, modules), { missing, gone }, modules.join(' '));
});

/** The modules (not tests) under `dir`, tracked or new, as paths relative to it. */
function modules(dir: string): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', dir], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && existsSync(join(root, f)))
    .map((f) => f.slice(dir.length));
}

test('operator/README.md names every module of operator/ in its room, and none that is gone', () => {
  const { missing, gone } = unmapped(
    tableRows(read('operator/README.md'), '# operator/'),
    modules('operator/'),
  );
  assert.deepEqual(missing, [], 'modules of operator/ its README does not name in their room');
  assert.deepEqual(gone, [], 'names in operator/README.md with no module behind them');
});

test("the README's layout lists every top-level folder, and only folders that exist", () => {
  const listed = tableRows(read('README.md'), '## Layout').flatMap(([folders = '']) =>
    codeSpans(folders).map((f) => f.replace(/\/$/, '')),
  );
  const tracked = new Set(
    execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.includes('/') && !f.startsWith('.'))
      .map((f) => f.slice(0, f.indexOf('/'))),
  );
  assert.deepEqual(
    [...tracked].filter((d) => !listed.includes(d)),
    [],
    'top-level folders the layout leaves out',
  );
  assert.deepEqual(
    listed.filter((d) => !existsSync(join(root, d))),
    [],
    'folders the layout lists that are not there',
  );
});
