// The incident: four app servers, each its own process with its own GLIDE client and store
// (GLIDE multiplexes every client), share one Redis. The limits hold exactly.
import { fileURLToPath } from 'node:url';
import { redisMultiprocessTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

redisMultiprocessTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./worker.ts', import.meta.url)),
    workers: [0, 1, 2, 3].map((i) => ({
      adapter: GLIDE.name,
      options: { autoPipelining: i % 2 === 0 }, // no effect on GLIDE
    })),
    title: 'four GLIDE processes, one Redis',
  },
);
