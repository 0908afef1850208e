import { redisServerClockTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

// Two app servers whose clocks disagree by an hour, sharing one Redis.
redisServerClockTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [GLIDE, GLIDE] });
