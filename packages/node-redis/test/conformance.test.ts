import { redisConformance } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// The conformance suite in clock: 'client' and clock: 'server', on every node-redis generation.
redisConformance(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: ADAPTERS, numRuns: 20 },
);
