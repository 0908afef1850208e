import { defineConfig } from 'vitest/config';

// Real redis-server processes, clusters and forked app servers: on a busy 2-core CI machine a
// test may take several seconds without anything being wrong. No test asserts a duration.
export default defineConfig({
  test: { testTimeout: 60_000, hookTimeout: 60_000 },
});
