// A reset, refund or block lift made by one process reaches the other's blocked-key cache
// through the change feed (every node-redis generation: @node-redis/client 1 has no PING while
// subscribed, and trusts its connection events); with the feed down, the cache's bound holds.
import { fileURLToPath } from 'node:url';
import { redisInvalidationTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

const worker = fileURLToPath(new URL('./invalidation-worker.ts', import.meta.url));
for (const adapter of ADAPTERS) {
  redisInvalidationTests(
    { describe, it, expect, beforeAll, afterAll },
    { worker, adapter: adapter.name },
  );
}
