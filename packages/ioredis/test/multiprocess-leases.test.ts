// Concurrency leases across four app servers, each its own process with its own ioredis client
// and store (two of them auto-pipelining), on one Redis: the limit holds at every instant, and a
// holder killed with SIGKILL frees its lease within leaseMs.
import { fileURLToPath } from 'node:url';
import { redisLeaseMultiprocessTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

redisLeaseMultiprocessTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./worker.ts', import.meta.url)),
    workers: [0, 1, 2, 3].map((i) => ({
      adapter: IOREDIS_5.name,
      options: { autoPipelining: i % 2 === 0 },
    })),
  },
);
