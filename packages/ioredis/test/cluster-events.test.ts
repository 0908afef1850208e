// ioredis Cluster through resharding under traffic (two processes) and a SIGKILLed master,
// measured in default and strict (WAIT) mode.
import { fileURLToPath } from 'node:url';
import { redisClusterEventTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

redisClusterEventTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [IOREDIS_5], worker: fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)) },
);
