import { defineConfig } from 'vitest/config';

// Real redis-server processes, and an HTTP bridge in front of each: on a busy 2-core CI machine a
// test may take several seconds without anything being wrong. No test asserts a duration. One
// file at a time: keys expire on Redis's real clock, and two files of HTTP traffic at once would
// slow every round trip between a write and the call that must still find its key.
export default defineConfig({
  test: { testTimeout: 60_000, hookTimeout: 60_000, fileParallelism: false },
});
