// A reset, refund or block lift made by one process reaches the other's blocked-key cache
// through the change feed (both ioredis majors); with the feed down, the cache's bound holds.
import { fileURLToPath } from 'node:url';
import { redisInvalidationTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5, IOREDIS_6 } from './adapters.js';

const worker = fileURLToPath(new URL('./invalidation-worker.ts', import.meta.url));
for (const adapter of [IOREDIS_5, IOREDIS_6]) {
  redisInvalidationTests(
    { describe, it, expect, beforeAll, afterAll },
    { worker, adapter: adapter.name },
  );
}
