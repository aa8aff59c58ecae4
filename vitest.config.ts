import { defineConfig } from 'vitest/config';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// One graphql module instance for type-graphql, Apollo and the tests ("another module or realm").
const graphqlEntry = require.resolve('graphql/index.js');

const shared = {
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
} as const;

export default defineConfig({
  ...shared,
  test: {
    // One temp directory for the whole run, checked empty at its end (test/support/temp-dir.ts).
    globalSetup: ['test/support/temp-dir.ts'],
    projects: [
      {
        ...shared,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        ...shared,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
