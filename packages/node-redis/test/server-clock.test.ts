import { redisServerClockTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_4, REDIS_6 } from './adapters.js';

// Two app servers whose clocks disagree by an hour, sharing one Redis (and using two different
// node-redis generations, as a rolling upgrade would).
redisServerClockTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [REDIS_6, REDIS_4] },
);
