// ESLint flat config. Every .ts file in tsconfig.json (src, test, bench) is
// linted with type information (typescript-eslint recommendedTypeChecked plus
// the rules below); the plain JS entry scripts (bin/, scripts/) without it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'src/gen/', '.run/', 'bench/results/', 'coverage/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `void p` is not handling p: a rejection still goes unhandled. Await, or end with .catch/.then(_, onRejected).
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch over a union with no default must list every member; a default deliberately covers the rest.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // A leading underscore marks a parameter kept for the signature.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
      // Rejecting with an AbortSignal's reason (typed any) or a caught value is how cancellation propagates.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Disabled: async implementations of Promise-returning interfaces (fakes, the sim, collectors) need no await,
      // and `async` still turns a synchronous throw into a rejection, which callers rely on.
      '@typescript-eslint/require-await': 'off',
      // One core/v1 model: client-node's model types come through src/api/core-v1.ts (wire form), not directly.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@kubernetes/client-node'],
              importNamePattern: '^(V1|V2|CoreV1|EventsV1)',
              message: 'Import core/v1 types from src/api/core-v1.ts (or src/api/pod.ts), the one model (docs/architecture.md).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/api/core-v1.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // CommonJS files exist to be loaded with require (src/workers/ts-worker-boot.cjs).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
