import { redisConformance } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

// The conformance suite in clock: 'client' and clock: 'server', on an auto-pipelining client.
redisConformance(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [IOREDIS_5], numRuns: 25 },
);
