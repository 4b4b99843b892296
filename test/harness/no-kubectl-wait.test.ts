// Our code never runs `kubectl wait`: it exits at once with an error when the apiserver has not
// yet written the conditions it waits on (kubernetes/kubernetes#66439), which a busy machine
// makes happen right after an apply. Waits poll the apiserver's own answer instead (crds.ts,
// wait.ts). Every tracked or new TypeScript and shell file of the repository is scanned for a
// kubectl call whose command is `wait` (an argument array starting with 'wait', a shell line);
// user docs (*.md) are not code and are not scanned. The detector is tried on made-up text
// first, so the scan cannot pass by matching nothing.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { appliedCrdNames, isEstablished } from './crds.ts';

const root = join(import.meta.dirname, '..', '..');
const self = relative(root, import.meta.filename);

/** A kubectl call in TypeScript whose argument array starts with 'wait'. */
const TS_CALL = /(kubectl\w*\([^)]*?|['"`]kubectl['"`]\s*,\s*)\[\s*['"`]wait['"`]/;
/** A shell line (outside a comment) that runs `kubectl [flags] wait`. */
const SHELL_CALL = /^[^#\n]*\bkubectl\b[^#\n;|&]*?\swait(\s|$)/m;

/** Whether `text`, the content of a file named `path`, runs `kubectl wait`. */
function runsKubectlWait(path: string, text: string): boolean {
  return /\.(ts|js|mjs)$/.test(path) ? TS_CALL.test(text) : SHELL_CALL.test(text);
}

test('the detector: kubectl calls whose command is wait, and nothing else', () => {
  const cases: [string, string, boolean][] = [
    ['a.ts', "kubectl(ctx.kubeconfigPath, ['wait', '--for=condition=Established', '-f', crds]);", true],
    ['a.ts', "kubectl([\n  'wait',\n  '--for=condition=Established',\n]);", true],
    ['a.ts', "execFileSync('kubectl', ['wait', 'crd/x']);", true],
    ['a.ts', "kubectl(['delete', 'aitask', 'x', '--wait=true']);", false],
    ['a.ts', '// the block has no `kubectl wait --for=condition=MetricsAvailable`', false],
    ['a.ts', "kubectl(['get', 'crd', 'x']); const wait = 1;", false],
    ['run', 'kubectl wait --for=condition=Ready pod/x', true],
    ['run', 'kubectl --kubeconfig "$k" wait crd/x', true],
    ['run', '# kubectl wait is not used', false],
    ['run', 'kubectl get pods; wait "$pid"', false],
    ['run', 'kubectl get pod wait-for-me', false],
  ];
  for (const [path, text, expected] of cases)
    assert.equal(runsKubectlWait(path, text), expected, `${path}: ${text}`);
});

test('no TypeScript or shell file of ours runs kubectl wait', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(
      (f) =>
        f !== self && !f.startsWith('node_modules/') && (/\.(ts|js|mjs|sh)$/.test(f) || f.startsWith('.ci/')),
    );
  assert.ok(files.length > 100, `${files.length} files scanned`);
  const found = files.filter((f) => runsKubectlWait(f, readFileSync(join(root, f), 'utf8')));
  assert.deepEqual(found, [], 'poll the apiserver instead (test/harness/crds.ts, eventually)');
});

test('the CRD wait reads what apply created and the condition the apiserver wrote', () => {
  assert.deepEqual(
    appliedCrdNames(
      'customresourcedefinition.apiextensions.k8s.io/catalogsources.operators.coreos.com serverside-applied\n' +
        'namespace/olm serverside-applied\n' +
        'customresourcedefinition.apiextensions.k8s.io/subscriptions.operators.coreos.com\n',
    ),
    ['catalogsources.operators.coreos.com', 'subscriptions.operators.coreos.com'],
  );
  assert.equal(isEstablished({ status: {} }), false, 'no conditions written yet');
  assert.equal(isEstablished({ status: { conditions: null } }), false);
  assert.equal(isEstablished({ status: { conditions: [{ type: 'NamesAccepted', status: 'True' }] } }), false);
  assert.equal(isEstablished({ status: { conditions: [{ type: 'Established', status: 'False' }] } }), false);
  assert.equal(isEstablished({ status: { conditions: [{ type: 'Established', status: 'True' }] } }), true);
});
