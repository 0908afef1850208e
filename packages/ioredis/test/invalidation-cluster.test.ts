// The change feed on a Redis Cluster: B's reset runs on the master owning the identity, its
// PUBLISH crosses the cluster bus, and A's subscriber (on whichever node it picked) hears it.
import { fileURLToPath } from 'node:url';
import { redisInvalidationTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

redisInvalidationTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./invalidation-worker.ts', import.meta.url)),
    adapter: IOREDIS_5.name,
    cluster: true,
  },
);
