import { fileURLToPath } from 'node:url';
import { redisChaosTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5, IOREDIS_6 } from './adapters.js';

// Four app servers (both ioredis majors) under a minute of random faults.
redisChaosTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./chaos-worker.ts', import.meta.url)),
    workers: [IOREDIS_5.name, IOREDIS_6.name, IOREDIS_5.name, IOREDIS_6.name],
    durationMs: Number(process.env.FLOODGATE_CHAOS_MS ?? 60_000),
  },
);
