import { fileURLToPath } from 'node:url';
import { redisChaosTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_5, REDIS_6 } from './adapters.js';

// Four app servers under a minute of random faults, on the node-redis generations whose reply
// parser survives a connection cut mid-reply (see survivesCutReplies in adapters.ts).
redisChaosTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./chaos-worker.ts', import.meta.url)),
    workers: [REDIS_6.name, REDIS_5.name, REDIS_6.name, REDIS_5.name],
    durationMs: Number(process.env.FLOODGATE_CHAOS_MS ?? 60_000),
  },
);
