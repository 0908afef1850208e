import { packageBuild } from '../../tsup.shared';

// @noble/hashes 2 ships ESM only: bundled, it reaches our CommonJS build too (Node 20 before
// 20.19 cannot require an ES module), and core keeps no runtime dependency on node:crypto.
export default {
  ...packageBuild({
    index: 'src/index.ts',
    concurrency: 'src/concurrency.ts',
    'headers/index': 'src/headers/index.ts',
    internal: 'src/internal.ts',
    'redis/index': 'src/redis/index.ts',
    slices: 'src/slices.ts',
    store: 'src/store.ts',
    telemetry: 'src/telemetry.ts',
  }),
  noExternal: ['@noble/hashes'],
  // One chunk for the code entries share, in CJS too: otherwise each CommonJS entry carries its
  // own FloodgateError and `instanceof` fails across /store, /redis and the main entry.
  splitting: true,
};
