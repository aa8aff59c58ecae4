// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**', '.data/**', 'test/generated/**', 'web/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/only-throw-error': 'off',
      // MikroORM's Opt<> brand on defaulted enum columns defeats this rule's type matching.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  {
    // Entities use decorators whose emitted metadata needs value imports of the decorated types.
    files: [
      'src/**/*.entity.ts',
      'src/**/*.resolver.ts',
      'src/**/*.input.ts',
      'src/**/*.type.ts',
      'src/graphql/**/*.ts',
    ],
    rules: { '@typescript-eslint/consistent-type-imports': 'off' },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
  // Plain-JavaScript entries (the description worker's bootstrap under tsx and vitest).
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
