// Lint rules for the whole package: strict typed TypeScript, no `any`, and the room
// boundaries of the design, enforced by the local rule `aiops/rooms` below: lib/ (helpers any
// room may use) imports only lib/ and package.json; api/ imports nothing of ours but lib/;
// operator/, plugin/ and conversion-webhook/ import only api/ and lib/, never each other,
// but for the plugin's use of operator/decision/ (pure, no I/O: `simulate` replays the
// operator's own rules);
// cmd/ holds the three programs' entry points: the operator's is where operator/ and
// conversion-webhook/ meet, the webhook's and the plugin's each build on their own room; and
// inside operator/ the rooms of operator/README.md: the runtime knows nothing of AITasks,
// the decision core does no I/O, the edges and the LLM advisor build on both. scripts/ may
// use every room but test/, which only the scripts that run tests import.
import { dirname, relative, resolve } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Room (folder, longest match wins) → what its modules may import, as repo paths: a folder
 * ends with '/', a file may restrict the names imported from it. Packages are not limited.
 * Tests may also import the test support, the harness and scripts/lib/ (what tests share with
 * the scripts). scripts/ builds on every room but test/: only the scripts that run tests
 * (scripts/test.ts and scripts/test/, the benchmarks' scripts/bench.ts) import it, and
 * `npm run image` the harness's look-up of its running real node. test/ is free.
 * @type {Record<string, (string | { path: string, names: string[] })[]>}
 */
const SCRIPTS = [
  'scripts/',
  'cmd/',
  'operator/',
  'conversion-webhook/',
  'plugin/',
  'api/',
  'lib/',
  'package.json',
];
const ROOMS = {
  'lib/': ['lib/', 'package.json'],
  'api/': ['api/', 'lib/'],
  'conversion-webhook/': ['conversion-webhook/', 'api/', 'lib/'],
  'plugin/': ['plugin/', 'api/', 'package.json', 'lib/', 'operator/decision/'],
  'cmd/': ['cmd/', 'operator/', 'conversion-webhook/', 'api/', 'lib/'],
  'cmd/webhook': ['conversion-webhook/', 'api/', 'lib/'],
  'cmd/kubectl-aiops': ['plugin/', 'api/', 'lib/', 'package.json'],
  'operator/': ['operator/', 'api/', 'lib/'],
  'operator/runtime/': [
    'operator/runtime/',
    'lib/',
    { path: 'api/schema/common.ts', names: ['ObjectMeta'] },
    { path: 'api/schema/v2.ts', names: ['TargetKind', 'TARGET_KINDS'] },
  ],
  'operator/decision/': ['operator/decision/', 'api/schema/', 'api/status/', 'api/install.ts', 'lib/'],
  'operator/llm/': ['operator/llm/', 'operator/decision/', 'operator/runtime/', 'api/', 'lib/'],
  'operator/edges/': ['operator/edges/', 'operator/decision/', 'operator/runtime/', 'api/', 'lib/'],
  'operator/olm/': ['operator/olm/', 'api/', 'lib/'],
  'scripts/': SCRIPTS,
  'scripts/test': [...SCRIPTS, 'test/'],
  'scripts/bench.ts': [...SCRIPTS, 'test/'],
  'scripts/image.ts': [...SCRIPTS, 'test/harness/real-node/running.ts'],
};
const TEST_SUPPORT = ['test/support/', 'test/harness/', 'scripts/lib/'];

/**
 * Where the helpers that are not the API live now: a module at an old path (left of each
 * pair) is refused with its new home, so nobody grows api/ or cmd/ back into a grab-bag.
 * @type {[string, string][]}
 */
const MOVED = [
  ['api/kube/', 'lib/kube/'],
  ['api/log', 'lib/log.ts, lib/log-once.ts'],
  ['api/full-gc', 'lib/full-gc.ts'],
  ['api/bounded-map', 'lib/bounded-concurrency.ts'],
  ['api/go-duration', 'lib/go-duration.ts'],
  ['api/redact', 'lib/redact.ts'],
  ['api/yaml', 'lib/yaml.ts'],
  ['api/leader', 'lib/lease-liveness.ts'],
  ['api/olm/', 'operator/olm/ and conversion-webhook/hosted/'],
  ['cmd/conversion-', 'conversion-webhook/hosted/'],
  ['cmd/webhook-cert', 'conversion-webhook/hosted/'],
  ['cmd/metrics-cert', 'operator/runtime/metrics-cert.ts'],
  ['conversion-webhook/tls', 'lib/tls/'],
  ['conversion-webhook/self-signed', 'lib/tls/'],
  ['conversion-webhook/main', 'cmd/webhook.ts'],
  ['plugin/main', 'cmd/kubectl-aiops.ts'],
];

/** @param {string} file repo path */
function roomOf(file) {
  return Object.keys(ROOMS)
    .filter((room) => file.startsWith(room))
    .sort((a, b) => b.length - a.length)[0];
}

/**
 * @param {string | { path: string, names: string[] }} entry
 * @param {string} target repo path
 * @param {string[] | undefined} names imported names (undefined: the whole module)
 */
function allows(entry, target, names) {
  if (typeof entry === 'string') return entry.endsWith('/') ? target.startsWith(entry) : target === entry;
  return target === entry.path && names !== undefined && names.every((n) => entry.names.includes(n));
}

/** @type {import('eslint').Rule.RuleModule} */
const rooms = {
  meta: { type: 'problem', schema: [], docs: { description: 'imports stay within the rooms of the layout' } },
  create(context) {
    const file = relative(import.meta.dirname, context.filename);
    const moved = MOVED.find(([old]) => file.startsWith(old));
    if (moved !== undefined)
      return {
        Program(node) {
          context.report({ node, message: `${file}: what lived at ${moved[0]}… belongs in ${moved[1]}.` });
        },
      };
    const room = roomOf(file);
    if (room === undefined) return {};
    const allowed = [...(ROOMS[room] ?? []), ...(file.endsWith('.test.ts') ? TEST_SUPPORT : [])];
    /**
     * @param {import('estree').Node} node
     * @param {unknown} source
     * @param {string[] | undefined} names
     */
    const check = (node, source, names) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = relative(import.meta.dirname, resolve(dirname(context.filename), source));
      if (allowed.some((entry) => allows(entry, target, names))) return;
      const list = allowed.map((e) => (typeof e === 'string' ? e : `${e.path} (${e.names.join(', ')})`));
      const what = names === undefined ? target : `${names.join(', ')} of ${target}`;
      context.report({ node, message: `${room} may import only ${list.join(', ')}; not ${what}.` });
    };
    return {
      ImportDeclaration(node) {
        const named = node.specifiers.every((s) => s.type === 'ImportSpecifier');
        const names = node.specifiers.map((s) =>
          s.type === 'ImportSpecifier' && s.imported.type === 'Identifier' ? s.imported.name : '*',
        );
        check(node, node.source.value, named && names.length > 0 ? names : undefined);
      },
      ExportNamedDeclaration(node) {
        if (node.source) check(node, node.source.value, undefined);
      },
      ExportAllDeclaration(node) {
        check(node, node.source.value, undefined);
      },
      ImportExpression(node) {
        if (node.source.type === 'Literal') check(node, node.source.value, undefined);
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'bundle/', 'deploy/', 'test/harness/tools/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', name: ['test', 'it', 'describe', 'suite'], package: 'node:test' },
          ],
        },
      ],
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // What ships: small files with names that say what they hold.
    files: [
      'lib/**/*.ts',
      'api/**/*.ts',
      'operator/**/*.ts',
      'plugin/**/*.ts',
      'conversion-webhook/**/*.ts',
      'cmd/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // The entry points and the wiring: what every feature changes stays readable in one screen.
    files: [
      'cmd/**/*.ts',
      'operator/assembly*.ts',
      'operator/command.ts',
      'operator/flag*.ts',
      'operator/runtime/manager.ts',
      'conversion-webhook/flags.ts',
      'conversion-webhook/hosted/flags.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      'max-lines': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { aiops: { rules: { rooms } } },
    rules: { 'aiops/rooms': 'error' },
  },
);
