import { defineConfig } from 'vitest/config';

// Each test file starts workerd (miniflare): run one file at a time, so on a busy 2-core machine
// the files do not slow each other's Durable Objects down. No test asserts a duration.
export default defineConfig({
  test: { testTimeout: 60_000, hookTimeout: 60_000, fileParallelism: false },
});
