import { redisBatchTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// Batched decisions equal one-at-a-time ones, late calls and cut connections inside a batch.
redisBatchTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS, seed: 10 });
