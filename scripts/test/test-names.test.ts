// A test file's name says what it needs: one that imports what hands it a control plane (the
// shared cluster's kubeconfig, an operator process run against it, a cluster or an `npm test`
// of its own) is named *.cluster.test.ts, so any other test file runs alone with `node --test`.
// Every file under test/attacks/ talks to the cluster and is known by that folder. A table on
// made-up files, then the repository's own.

import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { relativeImports } from './file-order.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** The modules that hand a test a control plane, as repo paths. */
const CLUSTER_MODULES: readonly string[] = [
  'test/support/cluster.ts',
  'test/support/operator.ts',
  'test/support/environment.ts',
  'test/harness/cluster.ts',
  'test/harness/interrupted-run.ts',
];

/** Why test file `path` (a repo path) is misnamed, given its `source`; undefined when its name fits. */
function misnamed(path: string, source: string): string | undefined {
  if (path.startsWith('test/attacks/') || path.endsWith('.cluster.test.ts')) return undefined;
  const cluster = relativeImports(source)
    .map((spec) => normalize(join(dirname(path), spec)))
    .find((target) => CLUSTER_MODULES.includes(target));
  return cluster === undefined ? undefined : `${path} imports ${cluster}: name it *.cluster.test.ts`;
}

test('misnamed: a table of made-up test files', () => {
  const table: [path: string, source: string, misnamed: boolean][] = [
    ['operator/a.test.ts', "import { testTransport } from '../test/support/cluster.ts';", true],
    ['operator/a.cluster.test.ts', "import { testTransport } from '../test/support/cluster.ts';", false],
    ['test/olm/b.test.ts', "import { startCluster } from '../harness/cluster.ts';", true],
    ['test/harness/c.test.ts', "import { interruptedRun } from './interrupted-run.ts';", true],
    ['test/attacks/d.test.ts', "import { startOperatorProcess } from '../support/operator.ts';", false],
    ['plugin/e.test.ts', "import { parse } from './flags.ts';", false],
    ['plugin/f.test.ts', "// not an import: '../test/support/cluster.ts'", false],
    ['test/support/g.test.ts', "import { kubectl } from './kubectl-run.ts';", false],
  ];
  for (const [path, source, expected] of table)
    assert.equal(misnamed(path, source) !== undefined, expected, path);
});

test("the repository's test files are named by what they need", () => {
  const files = globSync('**/*.test.ts', {
    cwd: root,
    exclude: (f) => f === 'node_modules' || f === 'dist' || f === '.git',
  });
  assert.ok(files.length > 100, `found only ${files.length} test files`);
  const wrong = files
    .map((f) => misnamed(f, readFileSync(join(root, f), 'utf8')))
    .filter((why) => why !== undefined);
  assert.deepEqual(wrong, []);
});
