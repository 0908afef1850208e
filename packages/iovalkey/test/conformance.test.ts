import { redisConformance } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOVALKEY } from './adapters.js';

// The conformance suite in clock: 'client' and clock: 'server', on an auto-pipelining client.
redisConformance(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [IOVALKEY], numRuns: 25 },
);
