// Four app servers, each a separate process with its own node-redis client (redis 6, 5, 4 and
// @node-redis/client 1: a fleet mid-upgrade), share one Redis; the limits hold exactly.
import { fileURLToPath } from 'node:url';
import { redisMultiprocessTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

redisMultiprocessTests(
  { describe, it, expect, beforeAll, afterAll },
  {
    worker: fileURLToPath(new URL('./worker.ts', import.meta.url)),
    workers: ADAPTERS.map((a) => ({ adapter: a.name })),
    title: 'four processes, four node-redis generations, one Redis',
  },
);
