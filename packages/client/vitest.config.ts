import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Real servers, real waits (a 2 s Retry-After herd, a browser start): generous, since
    // several test runs share this machine's two cores.
    testTimeout: 30_000,
    // One file at a time: the herd and pacing tests measure timing, and a browser start next to
    // them would steal the CPU they measure. Sequential is about as fast on two cores.
    fileParallelism: false,
    hookTimeout: 30_000,
  },
});
