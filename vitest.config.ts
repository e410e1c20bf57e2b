import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The unit and integration suites. Benchmarks (bench/) and the real-apiserver suite (test/apiserver/)
// have their own commands and never run here.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/apiserver/**', 'node_modules/**', 'dist/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One fork per core: vitest's default leaves one core to its main process, which waits here (on
    // CI's 2 cores the default ran every file in one fork, one after the other).
    maxWorkers: availableParallelism(),
    // Informers log failures to the console by default, and many tests cause failures on purpose:
    // show a test's output only when it fails.
    silent: 'passed-only',
  },
});
