import { defineConfig } from 'vitest/config';

// The test starts the app as a child process: slow on a busy CI machine, never a failure.
export default defineConfig({ test: { testTimeout: 30_000, hookTimeout: 30_000 } });
