// ESLint with typescript-eslint's type-aware rules over the library and its tests (npm run lint).
import { readFileSync } from 'node:fs';
import tseslint from 'typescript-eslint';

// The package's entry points (package.json "exports"), as their sources: `./dist/x/index.js` -> `src/x/index.ts`.
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const entryPoints = Object.values(pkg.exports)
  .map((target) => (typeof target === 'object' ? target.default : undefined))
  .filter((target) => typeof target === 'string' && target.startsWith('./dist/'))
  .map((target) => target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', 'node_modules/**', 'test/apiserver/**/*.go', 'coverage/**'] },
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Promises must be handled: the library's whole point is that failures go somewhere.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // An `async` function without `await` is how this code turns a synchronous throw into a
      // rejection (a ListerWatcher's list() must reject, never throw): keep that pattern.
      '@typescript-eslint/require-await': 'off',
      // Caught values are passed on as they are (`toError` wraps them where an Error is needed).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // One concept per file, none past 600 lines (CONTRIBUTING.md, "Habits"): a file that grows past it is
      // split at a seam (test/package/file-length.test.ts proves the rule holds for every file in src/).
      'max-lines': ['error', { max: 600, skipBlankLines: false, skipComments: false }],
      // Timers go through the injectable clock (CONTRIBUTING.md): never the globals in src/.
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'use the injectable Clock (core/clock.ts)' },
        { name: 'setInterval', message: 'use the injectable Clock (core/clock.ts)' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'use the injectable Clock (core/clock.ts)' },
        // Jitter takes a `random` option (runtime/backoff.ts `defaultRandom` is the one default).
        { object: 'Math', property: 'random', message: "take a `random?: () => number` option defaulting to runtime/backoff.ts's defaultRandom" },
      ],
    },
  },
  {
    // An entry point names what it exports, one by one, so nothing internal leaks through a re-export
    // (CONTRIBUTING.md, "Layout"); room barrels that are not entry points may `export *`.
    files: entryPoints,
    rules: {
      'no-restricted-syntax': ['error', { selector: 'ExportAllDeclaration', message: 'an entry point names what it exports (CONTRIBUTING.md): no `export *`' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'soak/**/*.ts', 'examples/**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true, allowShortCircuit: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
);
