import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Real servers, real waits (a 2 s Retry-After herd, a browser start): generous, since
    // several test runs share this machine's two cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
