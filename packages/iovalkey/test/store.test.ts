import { MemoryStore } from '@floodgate/memory';
import { redisStoreTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// The behaviour every Redis store shares: one command per decision, errors, readiness, fallback.
redisStoreTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: ADAPTERS, fallback: MemoryStore },
);
