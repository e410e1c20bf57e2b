// Vitest config of the real-apiserver suite (`npm run test:apiserver`); never part of `npm test`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/apiserver/**/*.test.ts'],
    globalSetup: ['test/apiserver/global-setup.ts'],
    // Each file starts its own etcd + apiserver; on 2 cores one pair at a time is the fast way.
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
  },
});
