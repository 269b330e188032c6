// ESLint (flat config) with typescript-eslint: the recommended rules, and the house's sizes for src/ (STYLE.md 11).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        Headers: 'readonly',
        Response: 'readonly',
        queueMicrotask: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // `typeof import('./x.js')` names the type of a module loaded lazily (a chunk of its own in the bundle).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      // Control characters in patterns are what sanitizing and escaping code looks for.
      'no-control-regex': 'off',
    },
  },
  {
    // Sizes a reader can hold (STYLE.md 11): past these, a file is two rooms and a function wants named steps.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 600 }],
      'max-lines-per-function': ['error', { max: 100 }],
      'max-params': ['error', { max: 8 }],
    },
  },
  {
    // The decision is awaited end to end (summarize awaits its model): a promise nobody awaits is a result nobody
    // checks, or a rejection nobody sees. These rules need the types, so they read tsconfig.json.
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
);
