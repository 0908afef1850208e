import { defineConfig } from 'vitest/config';

// Real servers on real sockets (and one real redis-server): on a busy 2-core CI machine a test
// may take seconds without anything being wrong. No test asserts a duration. The files mostly
// wait on sockets and timers (leaky-bucket queues), so more workers than cores shortens the run.
export default defineConfig({
  test: { testTimeout: 30_000, hookTimeout: 30_000, maxWorkers: 4 },
});
