// ESLint for the JavaScript half of the product: the shim (web/src), the worker
// (web/worker), the extension (web/extension), the entry points and the build's Node scripts.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['dist/**', 'dist.building/**', 'dist.previous/**', 'node_modules/**', 'tests/**', 'py_runtime/**', 'bench/**'] },
  js.configs.recommended,
  {
    files: ['web/**/*.{js,mjs}'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.worker },
    },
  },
  {
    files: ['web/extension/**/*.js'],
    languageOptions: { globals: { chrome: 'readonly' } },
  },
  {
    files: ['build/**/*.mjs', 'eslint.config.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.node },
  },
  {
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error',
    },
  },
];
