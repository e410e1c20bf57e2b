// Vitest config of the real-apiserver suite (`npm run test:apiserver`); never part of `npm test`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/apiserver/**/*.test.ts'],
    globalSetup: ['test/apiserver/global-setup.ts'],
    // The global setup starts one etcd + apiserver that most files share (startRealApiServer() with the
    // default flags); files that restart or reconfigure theirs start their own. On 2 cores, one file at a time.
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
  },
});
