// The order test files run in: what a module waits for, read from its source and its imports',
// and which file runs next. Tables on made-up modules, then the repository's own files.

import assert from 'node:assert/strict';
import { globSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BUILD_TARGETS, type BuildTarget } from '../../test/harness/pending-builds.ts';
import { buildsAwaited, buildsNeeded, nextFile, relativeImports, sourceReader } from './file-order.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

test('relativeImports: import, import type, re-export and dynamic import; not packages, not comments', () => {
  const source = [
    "import { a } from './a.ts';",
    "import type { B } from '../b/b.ts';",
    "import './side.ts';",
    "export { c } from './c.ts';",
    "const d = await import('./d.ts');",
    "import { readFileSync } from 'node:fs';",
    "import yaml from 'js-yaml';",
    "// import { e } from './e.ts';",
    "/* import { f } from './f.ts'; */",
  ].join('\n');
  assert.deepEqual(relativeImports(source), ['./a.ts', '../b/b.ts', './side.ts', './c.ts', './d.ts']);
});

test('buildsAwaited: literal targets; any other argument may be every target; comments do not count', () => {
  const cases: [string, readonly BuildTarget[]][] = [
    ['', []],
    ['awaitBuild(\'olm\');\n  awaitBuild("opm");', ['olm', 'opm']],
    ["awaitBuild('helm'); awaitBuild('helm');", ['helm']],
    ['awaitBuild(target);', BUILD_TARGETS],
    ["awaitBuild('not-a-target');", BUILD_TARGETS],
    ["// awaitBuild('krew')\n/* awaitBuild(x) */", []],
  ];
  for (const [source, want] of cases) assert.deepEqual(buildsAwaited(source), [...want], source);
});

test("buildsNeeded: its own waits and its direct imports', not deeper ones; missing modules are skipped", () => {
  const modules: Record<string, string> = {
    'test/x/a.test.ts':
      "import { h } from '../harness/h.ts';\nimport { m } from './missing.ts';\nawaitBuild('krew');",
    'test/harness/h.ts': "import { o } from './o.ts';\nawaitBuild('helm');",
    'test/harness/o.ts': "awaitBuild('olm');",
    'test/harness/pending-builds.ts': 'export function awaitBuild(target) {}',
    'test/x/plain.test.ts': "import { awaitBuild } from '../harness/pending-builds.ts';",
  };
  const read = (path: string): string | undefined => modules[path];
  assert.deepEqual([...buildsNeeded('test/x/a.test.ts', read)].sort(), ['helm', 'krew']);
  assert.deepEqual(
    [...buildsNeeded('test/x/plain.test.ts', read)],
    [],
    'importing awaitBuild is not waiting',
  );
  assert.deepEqual([...buildsNeeded('test/x/gone.test.ts', read)], []);
});

test('nextFile: the first whose builds have ended, else the first', () => {
  const needs: Record<string, ReadonlySet<BuildTarget>> = {
    'a-helm': new Set(['helm']),
    'b-olm': new Set(['olm', 'opm']),
    'c-none': new Set(),
  };
  const of = (f: string): ReadonlySet<BuildTarget> => needs[f] ?? new Set();
  const queue = Object.keys(needs);
  const built = (done: BuildTarget[]) => (t: BuildTarget) => done.includes(t);
  assert.equal(nextFile(queue, of, built([])), 'c-none');
  assert.equal(nextFile(queue, of, built(['olm'])), 'c-none');
  assert.equal(nextFile(queue, of, built(['helm'])), 'a-helm');
  assert.equal(nextFile(['b-olm', 'a-helm'], of, built(['olm', 'opm'])), 'b-olm');
  assert.equal(
    nextFile(['b-olm', 'a-helm'], of, built([])),
    'b-olm',
    'nothing ready: the first, which waits',
  );
  assert.throws(() => nextFile([], of, built([])), /empty/);
});

test("the repository's real-node files: each waits for the node's build, the OLM ones for olm and opm too, Helm's for helm", () => {
  const read = sourceReader(root);
  const files = globSync('test/real-node/*.test.ts', { cwd: root }).sort();
  const needs = Object.fromEntries(files.map((f) => [f, [...buildsNeeded(f, read)].sort()]));
  assert.deepEqual(needs, {
    'test/real-node/helm.cluster.test.ts': ['helm', 'node'],
    'test/real-node/interrupt.cluster.test.ts': ['node'],
    'test/real-node/olm-subscription.cluster.test.ts': ['node', 'olm', 'opm'],
    'test/real-node/olm-upgrade.cluster.test.ts': ['node', 'olm', 'opm'],
    'test/real-node/readme-block.cluster.test.ts': ['helm', 'node'],
    'test/real-node/readme-olm-block.cluster.test.ts': ['node', 'olm', 'opm'],
    'test/real-node/real-node.cluster.test.ts': ['node'],
  });
});
