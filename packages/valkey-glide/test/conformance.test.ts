import { redisConformance } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

// The conformance suite in clock: 'client' and clock: 'server'.
redisConformance({ describe, it, expect, beforeAll, afterAll }, { adapters: [GLIDE], numRuns: 25 });
