// The incident: four app servers, each its own process with its own ioredis client and store
// (two of them auto-pipelining), share one Redis. The limits hold exactly.
import { fileURLToPath } from 'node:url';
import { redisMultiprocessTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

redisMultiprocessTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./worker.ts', import.meta.url)),
    workers: [0, 1, 2, 3].map((i) => ({
      adapter: IOREDIS_5.name,
      options: { autoPipelining: i % 2 === 0 },
    })),
    title: 'four processes, one Redis',
  },
);
