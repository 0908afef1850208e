import { defineConfig } from 'vitest/config';

// Real servers on real sockets (and one real redis-server): on a busy 2-core CI machine a test
// may take seconds without anything being wrong. No test asserts a duration.
export default defineConfig({
  test: { testTimeout: 30_000, hookTimeout: 30_000 },
});
