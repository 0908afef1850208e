// node-redis createCluster (newest generation) through resharding under traffic (two processes)
// and a SIGKILLed master, measured in default and strict (WAIT) mode; strict mode on every
// generation's cluster client.
import { fileURLToPath } from 'node:url';
import { redisClusterEventTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_REDIS_1, REDIS_4, REDIS_5, REDIS_6 } from './adapters.js';

redisClusterEventTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    adapters: [REDIS_6],
    // The older generations: strict mode's pipeline on their cluster clients.
    strictOnly: [REDIS_5, REDIS_4, NODE_REDIS_1],
    worker: fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)),
  },
);
