import { redisServerClockTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

// Two app servers whose clocks disagree by an hour, sharing one Redis.
redisServerClockTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [IOREDIS_5, IOREDIS_5] },
);
