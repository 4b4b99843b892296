// Lint rules for the whole package: strict typed TypeScript, no `any`, and the room
// boundaries of the design (api/ imports nothing of ours; operator/, plugin/ and
// conversion-webhook/ import only api/, never each other).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const rooms = ['api', 'operator', 'plugin', 'conversion-webhook'];

/** @param {string} room */
function boundary(room) {
  const forbidden = rooms.filter((r) => r !== room && (room === 'api' || r !== 'api'));
  return {
    files: [`${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: forbidden.map((r) => ({
            group: [`**/${r}/**`, `../${r}`, `../../${r}`],
            message: `${room}/ must not import ${r}/ (see DESIGN §2: only api/ is shared).`,
          })),
        },
      ],
    },
  };
}

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
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      'max-lines': 'off',
    },
  },
  ...rooms.map(boundary),
);
