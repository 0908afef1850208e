import { redisServerClockTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTASH, UPSTASH_JSON } from './adapters.js';

// Two app servers whose clocks disagree by an hour, sharing one Redis through the REST API (one
// client on base64 responses, the other on plain JSON): on the server clock they decide as one.
redisServerClockTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [UPSTASH, UPSTASH_JSON] },
);
